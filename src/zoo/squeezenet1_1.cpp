// SqueezeNet 1.1 as torchvision.models.squeezenet1_1 in eval mode (224x224). It has no batch
// norm: every conv carries its own bias, with the ReLU fused. Names are torchvision's
// nn.Sequential indices (features.3 is the first Fire module, classifier.1 the final conv).
#include <string>

#include <fmt/format.h>

#include "src/zoo/builder.h"
#include "src/zoo/zoo.h"

namespace iostune {

namespace {

using zoo::square;

constexpr int kImageSize = 224;
constexpr int kClasses = 1000;

int fire(Graph& g, int index, int x, int squeeze, int expand1x1, int expand3x3) {
    const std::string m = fmt::format("features.{}", index);
    const int s = zoo::conv_relu(g, m + ".squeeze", x, square(squeeze, 1));
    const int e1 = zoo::conv_relu(g, m + ".expand1x1", s, square(expand1x1, 1));
    const int e3 = zoo::conv_relu(g, m + ".expand3x3", s, square(expand3x3, 3, 1, 1));
    return zoo::concat(g, m + ".cat", {e1, e3});
}

}  // namespace

Graph build_squeezenet1_1(int batch) {
    Graph g("squeezenet1_1", {batch, 3, kImageSize, kImageSize});
    int x = zoo::conv_relu(g, "features.0", kGraphInput, square(64, 3, 2));
    x = zoo::max_pool(g, "features.2", x, 3, 2, 0, true);
    x = fire(g, 3, x, 16, 64, 64);
    x = fire(g, 4, x, 16, 64, 64);
    x = zoo::max_pool(g, "features.5", x, 3, 2, 0, true);
    x = fire(g, 6, x, 32, 128, 128);
    x = fire(g, 7, x, 32, 128, 128);
    x = zoo::max_pool(g, "features.8", x, 3, 2, 0, true);
    x = fire(g, 9, x, 48, 192, 192);
    x = fire(g, 10, x, 48, 192, 192);
    x = fire(g, 11, x, 64, 256, 256);
    x = fire(g, 12, x, 64, 256, 256);
    // The classifier is a 1x1 conv + ReLU and a global average pool: logits N x 1000 x 1 x 1.
    x = zoo::conv_relu(g, "classifier.1", x, square(kClasses, 1));
    zoo::global_avg_pool(g, "classifier.3", x);
    return g;
}

}  // namespace iostune
