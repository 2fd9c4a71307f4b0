// Inception V3 as torchvision.models.inception_v3 in eval mode (299x299, no AuxLogits,
// transform_input off). Op names are torchvision's module paths; the functional pools and
// concats inside a module are named "<module>.avg_pool", ".max_pool" and ".cat".
#include <string>

#include "src/zoo/builder.h"
#include "src/zoo/zoo.h"

namespace iostune {

namespace {

using zoo::ConvSpec;
using zoo::square;

constexpr int kImageSize = 299;

// 1xk (horizontal) and kx1 (vertical) convolutions with "same" padding.
ConvSpec row(int out_channels, int k) { return {out_channels, 1, k, 1, 0, k / 2}; }
ConvSpec column(int out_channels, int k) { return {out_channels, k, 1, 1, k / 2, 0}; }

int inception_a(Graph& g, const std::string& m, int x, int pool_features) {
    const int b1 = zoo::conv_relu(g, m + ".branch1x1", x, square(64, 1));
    int b5 = zoo::conv_relu(g, m + ".branch5x5_1", x, square(48, 1));
    b5 = zoo::conv_relu(g, m + ".branch5x5_2", b5, square(64, 5, 1, 2));
    int b3 = zoo::conv_relu(g, m + ".branch3x3dbl_1", x, square(64, 1));
    b3 = zoo::conv_relu(g, m + ".branch3x3dbl_2", b3, square(96, 3, 1, 1));
    b3 = zoo::conv_relu(g, m + ".branch3x3dbl_3", b3, square(96, 3, 1, 1));
    int bp = zoo::avg_pool(g, m + ".avg_pool", x, 3, 1, 1);
    bp = zoo::conv_relu(g, m + ".branch_pool", bp, square(pool_features, 1));
    return zoo::concat(g, m + ".cat", {b1, b5, b3, bp});
}

int inception_b(Graph& g, const std::string& m, int x) {
    const int b3 = zoo::conv_relu(g, m + ".branch3x3", x, square(384, 3, 2));
    int bd = zoo::conv_relu(g, m + ".branch3x3dbl_1", x, square(64, 1));
    bd = zoo::conv_relu(g, m + ".branch3x3dbl_2", bd, square(96, 3, 1, 1));
    bd = zoo::conv_relu(g, m + ".branch3x3dbl_3", bd, square(96, 3, 2));
    const int bp = zoo::max_pool(g, m + ".max_pool", x, 3, 2);
    return zoo::concat(g, m + ".cat", {b3, bd, bp});
}

int inception_c(Graph& g, const std::string& m, int x, int c7) {
    const int b1 = zoo::conv_relu(g, m + ".branch1x1", x, square(192, 1));
    int b7 = zoo::conv_relu(g, m + ".branch7x7_1", x, square(c7, 1));
    b7 = zoo::conv_relu(g, m + ".branch7x7_2", b7, row(c7, 7));
    b7 = zoo::conv_relu(g, m + ".branch7x7_3", b7, column(192, 7));
    int bd = zoo::conv_relu(g, m + ".branch7x7dbl_1", x, square(c7, 1));
    bd = zoo::conv_relu(g, m + ".branch7x7dbl_2", bd, column(c7, 7));
    bd = zoo::conv_relu(g, m + ".branch7x7dbl_3", bd, row(c7, 7));
    bd = zoo::conv_relu(g, m + ".branch7x7dbl_4", bd, column(c7, 7));
    bd = zoo::conv_relu(g, m + ".branch7x7dbl_5", bd, row(192, 7));
    int bp = zoo::avg_pool(g, m + ".avg_pool", x, 3, 1, 1);
    bp = zoo::conv_relu(g, m + ".branch_pool", bp, square(192, 1));
    return zoo::concat(g, m + ".cat", {b1, b7, bd, bp});
}

int inception_d(Graph& g, const std::string& m, int x) {
    int b3 = zoo::conv_relu(g, m + ".branch3x3_1", x, square(192, 1));
    b3 = zoo::conv_relu(g, m + ".branch3x3_2", b3, square(320, 3, 2));
    int b7 = zoo::conv_relu(g, m + ".branch7x7x3_1", x, square(192, 1));
    b7 = zoo::conv_relu(g, m + ".branch7x7x3_2", b7, row(192, 7));
    b7 = zoo::conv_relu(g, m + ".branch7x7x3_3", b7, column(192, 7));
    b7 = zoo::conv_relu(g, m + ".branch7x7x3_4", b7, square(192, 3, 2));
    const int bp = zoo::max_pool(g, m + ".max_pool", x, 3, 2);
    return zoo::concat(g, m + ".cat", {b3, b7, bp});
}

// torchvision concatenates [2a, 2b] and [3a, 3b] first and then the four branches; channel order
// is the same when all six go into one Concat, and the block stays one level deep (IOS Table 1).
int inception_e(Graph& g, const std::string& m, int x) {
    const int b1 = zoo::conv_relu(g, m + ".branch1x1", x, square(320, 1));
    const int b3 = zoo::conv_relu(g, m + ".branch3x3_1", x, square(384, 1));
    const int b3a = zoo::conv_relu(g, m + ".branch3x3_2a", b3, row(384, 3));
    const int b3b = zoo::conv_relu(g, m + ".branch3x3_2b", b3, column(384, 3));
    int bd = zoo::conv_relu(g, m + ".branch3x3dbl_1", x, square(448, 1));
    bd = zoo::conv_relu(g, m + ".branch3x3dbl_2", bd, square(384, 3, 1, 1));
    const int bda = zoo::conv_relu(g, m + ".branch3x3dbl_3a", bd, row(384, 3));
    const int bdb = zoo::conv_relu(g, m + ".branch3x3dbl_3b", bd, column(384, 3));
    int bp = zoo::avg_pool(g, m + ".avg_pool", x, 3, 1, 1);
    bp = zoo::conv_relu(g, m + ".branch_pool", bp, square(192, 1));
    return zoo::concat(g, m + ".cat", {b1, b3a, b3b, bda, bdb, bp});
}

}  // namespace

Graph build_inception_v3(int batch) {
    Graph g("inception_v3", {batch, 3, kImageSize, kImageSize});
    int x = zoo::conv_relu(g, "Conv2d_1a_3x3", kGraphInput, square(32, 3, 2));
    x = zoo::conv_relu(g, "Conv2d_2a_3x3", x, square(32, 3));
    x = zoo::conv_relu(g, "Conv2d_2b_3x3", x, square(64, 3, 1, 1));
    x = zoo::max_pool(g, "maxpool1", x, 3, 2);
    x = zoo::conv_relu(g, "Conv2d_3b_1x1", x, square(80, 1));
    x = zoo::conv_relu(g, "Conv2d_4a_3x3", x, square(192, 3));
    x = zoo::max_pool(g, "maxpool2", x, 3, 2);
    x = inception_a(g, "Mixed_5b", x, 32);
    x = inception_a(g, "Mixed_5c", x, 64);
    x = inception_a(g, "Mixed_5d", x, 64);
    x = inception_b(g, "Mixed_6a", x);
    x = inception_c(g, "Mixed_6b", x, 128);
    x = inception_c(g, "Mixed_6c", x, 160);
    x = inception_c(g, "Mixed_6d", x, 160);
    x = inception_c(g, "Mixed_6e", x, 192);
    x = inception_d(g, "Mixed_7a", x);
    x = inception_e(g, "Mixed_7b", x);
    x = inception_e(g, "Mixed_7c", x);
    x = zoo::global_avg_pool(g, "avgpool", x);
    zoo::linear(g, "fc", x, 1000);
    return g;
}

}  // namespace iostune
