// CellBuilder: appends ops to a Graph, naming them "<cell>.<part>" and tagging each with the
// current cell index (Op::cell), so partition_blocks() cuts blocks at cell boundaries.
// Shared by the two irregular zoo models (NASNet-A and RandWire), whose batch norms are folded
// into the bias of the preceding convolution.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "src/graph.h"

namespace iostune::zoo_cells {

class CellBuilder {
public:
    explicit CellBuilder(Graph& graph) : graph_(graph) {}

    // Starts the next cell; ops added from now on carry its index and name prefix.
    void begin_cell(std::string name) {
        ++cell_;
        prefix_ = std::move(name);
    }
    int cell() const { return cell_; }

    // kxk convolution with folded batch norm (bias), symmetric padding k/2 unless given.
    int conv(int input, int out_channels, int kernel, int stride, int pad, const std::string& part,
             bool relu = false) {
        ConvAttrs a;
        a.out_channels = out_channels;
        a.kernel_h = a.kernel_w = kernel;
        a.stride_h = a.stride_w = stride;
        a.pad_h = a.pad_w = pad;
        a.bias = true;
        a.relu = relu;
        return add(OpKind::Conv, a, {input}, part);
    }

    // ReLU -> depthwise kxk (padding k/2) -> pointwise 1x1 -> folded batch norm.
    int sep_conv(int input, int out_channels, int kernel, int stride, const std::string& part) {
        SepConvAttrs a;
        a.out_channels = out_channels;
        a.kernel = kernel;
        a.stride = stride;
        a.pad = kernel / 2;
        a.pre_relu = true;
        a.bias = true;
        return add(OpKind::SepConv, a, {input}, part);
    }

    int max_pool(int input, int kernel, int stride, int pad, const std::string& part) {
        return add(OpKind::MaxPool, window(kernel, stride, pad, true), {input}, part);
    }

    // Average pooling that divides by the number of in-image elements (count_include_pad=False).
    int avg_pool(int input, int kernel, int stride, int pad, const std::string& part) {
        return add(OpKind::AvgPool, window(kernel, stride, pad, false), {input}, part);
    }

    int global_avg_pool(int input, const std::string& part) {
        PoolAttrs a;
        a.global = true;
        a.count_include_pad = false;
        return add(OpKind::AvgPool, a, {input}, part);
    }

    int relu(int input, const std::string& part) { return add(OpKind::Relu, ReluAttrs{}, {input}, part); }

    int sum(std::vector<int> inputs, const std::string& part) {
        return add(OpKind::Add, AddAttrs{}, std::move(inputs), part);
    }

    int concat(std::vector<int> inputs, const std::string& part) {
        return add(OpKind::Concat, ConcatAttrs{}, std::move(inputs), part);
    }

    int linear(int input, int out_features, const std::string& part) {
        LinearAttrs a;
        a.out_features = out_features;
        a.bias = true;
        return add(OpKind::Linear, a, {input}, part);
    }

private:
    static PoolAttrs window(int kernel, int stride, int pad, bool include_pad) {
        PoolAttrs a;
        a.kernel_h = a.kernel_w = kernel;
        a.stride_h = a.stride_w = stride;
        a.pad_h = a.pad_w = pad;
        a.count_include_pad = include_pad;
        return a;
    }

    int add(OpKind kind, OpAttrs attrs, std::vector<int> inputs, const std::string& part) {
        return graph_.add(kind, std::move(attrs), std::move(inputs),
                          fmt::format("{}.{}", prefix_, part), cell_);
    }

    Graph& graph_;
    int cell_ = -1;
    std::string prefix_;
};

}  // namespace iostune::zoo_cells
