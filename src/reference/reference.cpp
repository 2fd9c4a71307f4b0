#include "src/reference/reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <stdexcept>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "src/error.h"
#include "src/host_memory.h"
#include "src/memory_needs.h"
#include "src/quoted.h"
#include "src/shape_limits.h"
#include "src/operator_info.h"
#include "src/reference/kernels.h"

namespace iostune {

namespace {

using namespace reference_detail;

// Checks params against param_shapes() for the op applied to `in` (the op's own graph may have
// another batch size, so the layout is derived from a one-op graph over the actual input).
void check_params(const Op& op, const Shape& in, const std::vector<ParamTensor>& params) {
    Graph single(op.name, in);
    OpAttrs attrs = op.attrs;
    if (auto* conv = std::get_if<ConvAttrs>(&attrs)) conv->residual = false;  // z has no parameters
    single.add(op.kind, attrs, {kGraphInput}, op.name);
    const auto expected = param_shapes(single, 0);
    if (params.size() != expected.size())
        throw Error(fmt::format("reference: op {} ({}) expects {} parameter tensors, got {}",
                                quoted_name(op.name), to_string(op.kind), expected.size(),
                                params.size()));
    for (size_t i = 0; i < params.size(); ++i) {
        size_t count = 1;
        for (int d : expected[i]) count *= size_t(d);
        if (params[i].dims != expected[i] || params[i].values.size() != count)
            throw Error(fmt::format("reference: op {} ({}) parameter {} has dims [{}] and {} "
                                    "values, expected dims [{}]",
                                    quoted_name(op.name), to_string(op.kind), i,
                                    fmt::join(params[i].dims, ","),
                                    params[i].values.size(), fmt::join(expected[i], ",")));
    }
}

const float* optional_param(const std::vector<ParamTensor>& params, size_t index, bool present) {
    return present ? params[index].values.data() : nullptr;
}

// A residual convolution is computed as its parts: the convolution (+ bias), the add of z, the
// ReLU; a fused activation is the Activation op's own loop over the result. So a fused
// convolution equals the unfused ops bit for bit.
HostTensor run_conv(const Op& op, const std::vector<const HostTensor*>& inputs,
                    const std::vector<ParamTensor>& params, const Shape& out_shape) {
    const auto& a = op.as<ConvAttrs>();
    HostTensor out(out_shape);
    if (!a.residual) {
        conv2d(*inputs[0], params[0].values.data(), optional_param(params, 1, a.bias), a, out);
    } else {
        ConvAttrs conv_only = a;
        conv_only.relu = false;
        HostTensor conv(out_shape);
        conv2d(*inputs[0], params[0].values.data(), optional_param(params, 1, a.bias), conv_only,
               conv);
        add({&conv, inputs[1]}, a.relu, out);
    }
    if (a.activation) activation(out, *a.activation, out);
    if (a.prelu) prelu(out, params.back().values.data(), out);
    return out;
}

HostTensor run_sepconv(const Op& op, const HostTensor& in, const std::vector<ParamTensor>& params,
                       const Shape& out_shape) {
    const auto& a = op.as<SepConvAttrs>();
    const HostTensor* x = &in;
    HostTensor rectified;
    if (a.pre_relu) {
        rectified = in;
        relu_inplace(rectified);
        x = &rectified;
    }
    ConvAttrs depthwise;
    depthwise.out_channels = depthwise.groups = in.shape.c;
    depthwise.kernel_h = depthwise.kernel_w = a.kernel;
    depthwise.stride_h = depthwise.stride_w = a.stride;
    depthwise.pad_h = depthwise.pad_w = a.pad;
    depthwise.dilation_h = depthwise.dilation_w = a.dilation;
    HostTensor mid({in.shape.n, in.shape.c, out_shape.h, out_shape.w});
    conv2d(*x, params[0].values.data(), nullptr, depthwise, mid);
    ConvAttrs pointwise;
    pointwise.out_channels = a.out_channels;
    HostTensor out(out_shape);
    conv2d(mid, params[1].values.data(), optional_param(params, 2, a.bias), pointwise, out);
    if (a.post_relu) relu_inplace(out);
    return out;
}

// An allocation that failed after the memory check passed (another process took the memory)
// still says which op needed it.
Error out_of_memory(const Op& op) {
    return Error(fmt::format("out of host memory computing op {} ({}, output {}) of the CPU "
                             "reference",
                             quoted_name(op.name), to_string(op.kind), shape_text(op.output)));
}

// Runs the graph op by op. keep_all = false frees each tensor after its last consumer, so a
// whole model at full resolution needs only its live tensors; the outputs are kept.
std::vector<HostTensor> run_graph(const Graph& graph, const std::vector<HostTensor>& inputs_given,
                                  bool keep_all) {
    if (graph.weights_state() == WeightsState::Absent)
        throw Error(fmt::format("reference: model {} has no weights; load or seed weights "
                                "before running the CPU reference",
                                quoted_name(graph.name())));
    if (int(inputs_given.size()) != graph.input_count())
        throw Error(fmt::format("reference: model {} takes {} input(s), got {}",
                                quoted_name(graph.name()),
                                graph.input_count(), inputs_given.size()));
    for (int k = 0; k < graph.input_count(); ++k) {
        const HostTensor& input = inputs_given[size_t(k)];
        if (!(input.shape == graph.input_shape(k)) ||
            input.data.size() != size_t(input.shape.elements()))
            throw Error(fmt::format("reference: model {} takes a {} input {}, got {} with {} "
                                    "values",
                                    quoted_name(graph.name()), shape_text(graph.input_shape(k)), k,
                                    shape_text(input.shape), input.data.size()));
    }
    // Its tensors are counted before the first one is made: a model this machine cannot hold
    // is refused in one line, not by the allocator or the kernel's OOM killer.
    require_host_memory(reference_memory_needs(graph).activations,
                        fmt::format("the tensors of the CPU reference of model {} at batch {}",
                                    quoted_name(graph.name()), graph.batch()));
    const std::vector<int> kept = graph.outputs();
    std::vector<int> last_use(size_t(graph.size()), -1);
    for (const Op& op : graph.ops())
        for (int src : op.inputs)
            if (!is_graph_input(src)) last_use[size_t(src)] = op.id;
    std::vector<HostTensor> outputs(size_t(graph.size()));
    for (const Op& op : graph.ops()) {
        std::vector<const HostTensor*> inputs;
        for (int src : op.inputs)
            inputs.push_back(is_graph_input(src) ? &inputs_given[size_t(graph_input_index(src))]
                                                 : &outputs[size_t(src)]);
        try {
            outputs[size_t(op.id)] = reference_op(op, inputs, graph.params_of(op.id));
        } catch (const std::bad_alloc&) {
            throw out_of_memory(op);
        } catch (const std::length_error&) {  // a vector asked for more than it can index
            throw out_of_memory(op);
        }
        if (keep_all) continue;
        for (int src : op.inputs)
            if (!is_graph_input(src) && last_use[size_t(src)] == op.id &&
                std::find(kept.begin(), kept.end(), src) == kept.end())
                outputs[size_t(src)] = HostTensor();
    }
    return outputs;
}

}  // namespace

HostTensor reference_op(const Op& op, const std::vector<const HostTensor*>& inputs,
                        const std::vector<ParamTensor>& params) {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i]->data.size() != size_t(inputs[i]->shape.elements()))
            throw Error(fmt::format("reference: op {} input {} is {} but holds {} values",
                                    quoted_name(op.name), i, shape_text(inputs[i]->shape),
                                    inputs[i]->data.size()));
        shapes.push_back(inputs[i]->shape);
    }
    const Shape out_shape = infer_shape(op.kind, op.attrs, shapes, op.name);
    const bool has_params = op.kind == OpKind::Conv || op.kind == OpKind::SepConv ||
                            op.kind == OpKind::Linear || op.kind == OpKind::ConvTranspose ||
                            op.kind == OpKind::ChannelAffine || op.kind == OpKind::ChannelNorm ||
                            op.kind == OpKind::PRelu || op.kind == OpKind::GroupNorm;
    if (has_params) {
        check_params(op, shapes[0], params);
    } else if (!params.empty()) {
        throw Error(fmt::format("reference: op {} ({}) takes no parameters, got {}",
                                quoted_name(op.name),
                                to_string(op.kind), params.size()));
    }
    switch (op.kind) {
        case OpKind::Conv: return run_conv(op, inputs, params, out_shape);
        case OpKind::SepConv: return run_sepconv(op, *inputs[0], params, out_shape);
        case OpKind::MaxPool: {
            HostTensor out(out_shape);
            max_pool(*inputs[0], op.as<PoolAttrs>(), out);
            return out;
        }
        case OpKind::AvgPool: {
            HostTensor out(out_shape);
            avg_pool(*inputs[0], op.as<PoolAttrs>(), out);
            return out;
        }
        case OpKind::Concat: {
            HostTensor out(out_shape);
            concat_channels(inputs, out);
            return out;
        }
        case OpKind::Add: {
            HostTensor out(out_shape);
            add(inputs, op.as<AddAttrs>().relu, out);
            return out;
        }
        case OpKind::Relu: {
            HostTensor out = *inputs[0];
            relu_inplace(out);
            return out;
        }
        case OpKind::Linear: {
            HostTensor out(out_shape);
            linear(*inputs[0], params[0].values.data(),
                   optional_param(params, 1, op.as<LinearAttrs>().bias), out);
            return out;
        }
        case OpKind::Softmax: {
            HostTensor out(out_shape);
            softmax_channels(*inputs[0], out);
            return out;
        }
        case OpKind::Identity: return *inputs[0];
        case OpKind::Activation: {
            HostTensor out(out_shape);
            activation(*inputs[0], op.as<ActivationAttrs>(), out);
            return out;
        }
        case OpKind::Binary: {
            HostTensor out(out_shape);
            binary(*inputs[0], *inputs[1], op.as<BinaryAttrs>().op, out);
            return out;
        }
        case OpKind::ChannelAffine: {
            HostTensor out(out_shape);
            channel_affine(*inputs[0], params[0].values.data(), params[1].values.data(), out);
            return out;
        }
        case OpKind::ChannelShuffle: {
            HostTensor out(out_shape);
            channel_shuffle(*inputs[0], op.as<ChannelShuffleAttrs>().groups, out);
            return out;
        }
        case OpKind::ChannelSlice: {
            HostTensor out(out_shape);
            channel_slice(*inputs[0], op.as<ChannelSliceAttrs>().begin, out);
            return out;
        }
        case OpKind::Resize: {
            HostTensor out(out_shape);
            resize(*inputs[0], op.as<ResizeAttrs>(), out);
            return out;
        }
        case OpKind::ConvTranspose: {
            HostTensor out(out_shape);
            conv_transpose2d(*inputs[0], params[0].values.data(),
                             optional_param(params, 1, op.as<ConvTransposeAttrs>().bias),
                             op.as<ConvTransposeAttrs>(), out);
            return out;
        }
        case OpKind::SpatialPad: {
            HostTensor out(out_shape);
            spatial_pad(*inputs[0], op.as<SpatialPadAttrs>(), out);
            return out;
        }
        case OpKind::ChannelNorm: {
            HostTensor out(out_shape);
            channel_norm(*inputs[0], op.as<ChannelNormAttrs>().eps, params[0].values.data(),
                         params[1].values.data(), out);
            return out;
        }
        case OpKind::PRelu: {
            HostTensor out(out_shape);
            prelu(*inputs[0], params[0].values.data(), out);
            return out;
        }
        case OpKind::GroupNorm: {
            HostTensor out(out_shape);
            group_norm(*inputs[0], op.as<GroupNormAttrs>(), params[0].values.data(),
                       params[1].values.data(), out);
            return out;
        }
        case OpKind::RadixSoftmax: {
            HostTensor out(out_shape);
            radix_softmax(*inputs[0], op.as<RadixSoftmaxAttrs>(), out);
            return out;
        }
        case OpKind::StridedSlice: {
            HostTensor out(out_shape);
            strided_slice(*inputs[0], op.as<StridedSliceAttrs>(), out);
            return out;
        }
        case OpKind::DepthToSpace: {
            HostTensor out(out_shape);
            depth_to_space(*inputs[0], op.as<DepthSpaceAttrs>(), out);
            return out;
        }
        case OpKind::SpaceToDepth: {
            HostTensor out(out_shape);
            space_to_depth(*inputs[0], op.as<DepthSpaceAttrs>(), out);
            return out;
        }
        case OpKind::Flatten: {
            HostTensor out(out_shape);
            flatten(*inputs[0], out);
            return out;
        }
    }
    throw Error(fmt::format("reference: op {} has an unknown kind", quoted_name(op.name)));
}

std::vector<HostTensor> reference_run_all(const Graph& graph, const HostTensor& input) {
    return run_graph(graph, {input}, true);
}

HostTensor reference_run(const Graph& graph, const HostTensor& input) {
    if (graph.size() == 0) return input;
    auto outputs = run_graph(graph, {input}, false);
    return std::move(outputs[size_t(graph.output_id())]);
}

std::vector<HostTensor> reference_run_outputs(const Graph& graph,
                                              const std::vector<HostTensor>& inputs) {
    auto all = run_graph(graph, inputs, false);
    std::vector<HostTensor> outputs;
    for (int id : graph.outputs()) outputs.push_back(std::move(all[size_t(id)]));
    return outputs;
}

}  // namespace iostune
