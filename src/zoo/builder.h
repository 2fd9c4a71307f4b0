// Small helpers the zoo builders share, so each model file reads like its torchvision source.
//
// Batch norm is folded: a torchvision Conv2d(bias=False) + BatchNorm2d (+ ReLU) becomes one Conv
// op with bias=true (the folded shift) and relu fused. Dropout is omitted (inference).
#pragma once

#include <string>
#include <vector>

#include "src/graph.h"

namespace iostune::zoo {

// Geometry of a convolution; padding is per axis because Inception uses 1x7 / 7x1 kernels.
struct ConvSpec {
    int out_channels = 0;
    int kernel_h = 1, kernel_w = 1;
    int stride = 1;
    int pad_h = 0, pad_w = 0;
};

// Square kxk kernel with the given stride and symmetric padding.
ConvSpec square(int out_channels, int kernel, int stride = 1, int pad = 0);

// Conv (+ folded BN) + ReLU.
int conv_relu(Graph& g, const std::string& name, int input, const ConvSpec& spec);
// Conv (+ folded BN) without activation: ResNet's conv3 and downsample, whose ReLU comes after
// the residual Add.
int conv_linear(Graph& g, const std::string& name, int input, const ConvSpec& spec);

int max_pool(Graph& g, const std::string& name, int input, int kernel, int stride, int pad = 0,
             bool ceil_mode = false);
// torch.nn.AvgPool2d / F.avg_pool2d defaults: count_include_pad=True, ceil_mode=False.
int avg_pool(Graph& g, const std::string& name, int input, int kernel, int stride, int pad = 0);
int global_avg_pool(Graph& g, const std::string& name, int input);

int concat(Graph& g, const std::string& name, std::vector<int> inputs);
int add_relu(Graph& g, const std::string& name, std::vector<int> inputs);
// Fully connected over the flattened C*H*W input (torch.flatten is implicit).
int linear(Graph& g, const std::string& name, int input, int out_features);

}  // namespace iostune::zoo
