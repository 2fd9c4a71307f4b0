// GoogLeNet as torchvision.models.googlenet in eval mode (224x224, no aux classifiers,
// transform_input off). torchvision's "5x5" branch uses a 3x3 conv and every max pool uses
// ceil_mode=True; both are kept so shapes and FLOPs equal the reference model's.
#include <string>

#include "src/zoo/builder.h"
#include "src/zoo/zoo.h"

namespace iostune {

namespace {

using zoo::square;

constexpr int kImageSize = 224;

struct InceptionWidths {
    int ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj;
};

// Branch names follow torchvision's nn.Sequential indices (branch2.0, branch2.1, ...).
int inception(Graph& g, const std::string& m, int x, const InceptionWidths& w) {
    const int b1 = zoo::conv_relu(g, m + ".branch1", x, square(w.ch1x1, 1));
    int b2 = zoo::conv_relu(g, m + ".branch2.0", x, square(w.ch3x3red, 1));
    b2 = zoo::conv_relu(g, m + ".branch2.1", b2, square(w.ch3x3, 3, 1, 1));
    int b3 = zoo::conv_relu(g, m + ".branch3.0", x, square(w.ch5x5red, 1));
    b3 = zoo::conv_relu(g, m + ".branch3.1", b3, square(w.ch5x5, 3, 1, 1));
    int b4 = zoo::max_pool(g, m + ".branch4.0", x, 3, 1, 1, true);
    b4 = zoo::conv_relu(g, m + ".branch4.1", b4, square(w.pool_proj, 1));
    return zoo::concat(g, m + ".cat", {b1, b2, b3, b4});
}

}  // namespace

Graph build_googlenet(int batch) {
    Graph g("googlenet", {batch, 3, kImageSize, kImageSize});
    int x = zoo::conv_relu(g, "conv1", kGraphInput, square(64, 7, 2, 3));
    x = zoo::max_pool(g, "maxpool1", x, 3, 2, 0, true);
    x = zoo::conv_relu(g, "conv2", x, square(64, 1));
    x = zoo::conv_relu(g, "conv3", x, square(192, 3, 1, 1));
    x = zoo::max_pool(g, "maxpool2", x, 3, 2, 0, true);
    x = inception(g, "inception3a", x, {64, 96, 128, 16, 32, 32});
    x = inception(g, "inception3b", x, {128, 128, 192, 32, 96, 64});
    x = zoo::max_pool(g, "maxpool3", x, 3, 2, 0, true);
    x = inception(g, "inception4a", x, {192, 96, 208, 16, 48, 64});
    x = inception(g, "inception4b", x, {160, 112, 224, 24, 64, 64});
    x = inception(g, "inception4c", x, {128, 128, 256, 24, 64, 64});
    x = inception(g, "inception4d", x, {112, 144, 288, 32, 64, 64});
    x = inception(g, "inception4e", x, {256, 160, 320, 32, 128, 128});
    x = zoo::max_pool(g, "maxpool4", x, 2, 2, 0, true);
    x = inception(g, "inception5a", x, {256, 160, 320, 32, 128, 128});
    x = inception(g, "inception5b", x, {384, 192, 384, 48, 128, 128});
    x = zoo::global_avg_pool(g, "avgpool", x);
    zoo::linear(g, "fc", x, 1000);
    return g;
}

}  // namespace iostune
