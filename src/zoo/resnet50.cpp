// ResNet-50 as torchvision.models.resnet50 in eval mode (224x224): v1.5 bottlenecks (stride on
// the 3x3 conv), a 1x1 conv + BN downsample on the first block of each stage, and the residual
// ReLU fused into the Add.
#include <string>

#include <fmt/format.h>

#include "src/zoo/builder.h"
#include "src/zoo/zoo.h"

namespace iostune {

namespace {

using zoo::square;

constexpr int kImageSize = 224;
constexpr int kExpansion = 4;

int bottleneck(Graph& g, const std::string& m, int x, int width, int stride) {
    const int out_channels = width * kExpansion;
    int y = zoo::conv_relu(g, m + ".conv1", x, square(width, 1));
    y = zoo::conv_relu(g, m + ".conv2", y, square(width, 3, stride, 1));
    y = zoo::conv_linear(g, m + ".conv3", y, square(out_channels, 1));
    int identity = x;
    if (stride != 1 || g.tensor_shape(x).c != out_channels)
        identity = zoo::conv_linear(g, m + ".downsample", x, square(out_channels, 1, stride));
    return zoo::add_relu(g, m + ".add", {y, identity});
}

}  // namespace

Graph build_resnet50(int batch) {
    struct Stage {
        int blocks, width, stride;
    };
    constexpr Stage kStages[] = {{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}};

    Graph g("resnet50", {batch, 3, kImageSize, kImageSize});
    int x = zoo::conv_relu(g, "conv1", kGraphInput, square(64, 7, 2, 3));
    x = zoo::max_pool(g, "maxpool", x, 3, 2, 1);
    int layer = 1;
    for (const Stage& stage : kStages) {
        for (int b = 0; b < stage.blocks; ++b)
            x = bottleneck(g, fmt::format("layer{}.{}", layer, b), x, stage.width,
                           b == 0 ? stage.stride : 1);
        ++layer;
    }
    x = zoo::global_avg_pool(g, "avgpool", x);
    zoo::linear(g, "fc", x, 1000);
    return g;
}

}  // namespace iostune
