#include "src/zoo/builder.h"

#include <utility>

namespace iostune::zoo {

namespace {

int add_conv(Graph& g, const std::string& name, int input, const ConvSpec& spec, bool relu) {
    ConvAttrs a;
    a.out_channels = spec.out_channels;
    a.kernel_h = spec.kernel_h;
    a.kernel_w = spec.kernel_w;
    a.stride_h = a.stride_w = spec.stride;
    a.pad_h = spec.pad_h;
    a.pad_w = spec.pad_w;
    a.bias = true;
    a.relu = relu;
    return g.add(OpKind::Conv, a, {input}, name);
}

PoolAttrs window(int kernel, int stride, int pad, bool ceil_mode) {
    PoolAttrs a;
    a.kernel_h = a.kernel_w = kernel;
    a.stride_h = a.stride_w = stride;
    a.pad_h = a.pad_w = pad;
    a.ceil_mode = ceil_mode;
    return a;
}

}  // namespace

ConvSpec square(int out_channels, int kernel, int stride, int pad) {
    return {out_channels, kernel, kernel, stride, pad, pad};
}

int conv_relu(Graph& g, const std::string& name, int input, const ConvSpec& spec) {
    return add_conv(g, name, input, spec, true);
}

int conv_linear(Graph& g, const std::string& name, int input, const ConvSpec& spec) {
    return add_conv(g, name, input, spec, false);
}

int max_pool(Graph& g, const std::string& name, int input, int kernel, int stride, int pad,
             bool ceil_mode) {
    return g.add(OpKind::MaxPool, window(kernel, stride, pad, ceil_mode), {input}, name);
}

int avg_pool(Graph& g, const std::string& name, int input, int kernel, int stride, int pad) {
    return g.add(OpKind::AvgPool, window(kernel, stride, pad, false), {input}, name);
}

int global_avg_pool(Graph& g, const std::string& name, int input) {
    PoolAttrs a;
    a.global = true;
    return g.add(OpKind::AvgPool, a, {input}, name);
}

int concat(Graph& g, const std::string& name, std::vector<int> inputs) {
    return g.add(OpKind::Concat, ConcatAttrs{}, std::move(inputs), name);
}

int add_relu(Graph& g, const std::string& name, std::vector<int> inputs) {
    return g.add(OpKind::Add, AddAttrs{.relu = true}, std::move(inputs), name);
}

int linear(Graph& g, const std::string& name, int input, int out_features) {
    return g.add(OpKind::Linear, LinearAttrs{.out_features = out_features, .bias = true}, {input},
                 name);
}

}  // namespace iostune::zoo
