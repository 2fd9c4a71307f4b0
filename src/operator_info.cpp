#include "src/operator_info.h"

namespace iostune {

// exp, erf and tanh count as ~4.
int64_t activation_flops(const ActivationAttrs& a) {
    switch (a.function) {
        case ActivationFunction::Clip:
        case ActivationFunction::LeakyRelu: return 2;
        case ActivationFunction::HardSigmoid: return 4;
        case ActivationFunction::HardSwish: return 5;
        case ActivationFunction::Sigmoid:
        case ActivationFunction::Tanh: return 6;
        case ActivationFunction::Silu: return 7;
        case ActivationFunction::Gelu: return 8;
    }
    return 1;
}

std::vector<std::vector<int>> param_shapes(const Graph& graph, int op_id) {
    const Op& op = graph.op(op_id);
    const Shape& in = graph.tensor_shape(op.inputs.empty() ? kGraphInput : op.inputs[0]);
    switch (op.kind) {
        case OpKind::Conv: {
            const auto& a = op.as<ConvAttrs>();
            std::vector<std::vector<int>> p{{a.out_channels, in.c / a.groups, a.kernel_h, a.kernel_w}};
            if (a.bias) p.push_back({a.out_channels});
            if (a.prelu) p.push_back({a.out_channels});
            return p;
        }
        case OpKind::SepConv: {
            const auto& a = op.as<SepConvAttrs>();
            std::vector<std::vector<int>> p{{in.c, 1, a.kernel, a.kernel}, {a.out_channels, in.c, 1, 1}};
            if (a.bias) p.push_back({a.out_channels});
            return p;
        }
        case OpKind::Linear: {
            const auto& a = op.as<LinearAttrs>();
            std::vector<std::vector<int>> p{{a.out_features, in.c * in.h * in.w}};
            if (a.bias) p.push_back({a.out_features});
            return p;
        }
        case OpKind::ConvTranspose: {
            const auto& a = op.as<ConvTransposeAttrs>();
            std::vector<std::vector<int>> p{
                {in.c, a.out_channels / a.groups, a.kernel_h, a.kernel_w}};
            if (a.bias) p.push_back({a.out_channels});
            return p;
        }
        case OpKind::ChannelAffine:
        case OpKind::ChannelNorm:
        case OpKind::GroupNorm: return {{in.c}, {in.c}};
        case OpKind::PRelu: return {{in.c}};
        default: return {};
    }
}

int64_t param_count(const Graph& graph, int op_id) {
    int64_t total = 0;
    for (const auto& dims : param_shapes(graph, op_id)) {
        int64_t n = 1;
        for (int d : dims) n *= d;
        total += n;
    }
    return total;
}

int64_t flops(const Graph& graph, int op_id) {
    const Op& op = graph.op(op_id);
    const Shape& out = op.output;
    const Shape& in = graph.tensor_shape(op.inputs.empty() ? kGraphInput : op.inputs[0]);
    const int64_t out_elems = out.elements();
    switch (op.kind) {
        case OpKind::Conv: {
            const auto& a = op.as<ConvAttrs>();
            const int64_t macs = out_elems * (in.c / a.groups) * a.kernel_h * a.kernel_w;
            return 2 * macs + (a.bias ? out_elems : 0) + (a.residual ? out_elems : 0) +
                   (a.relu ? out_elems : 0) + (a.prelu ? 2 * out_elems : 0) +
                   (a.activation ? out_elems * activation_flops(*a.activation) : 0);
        }
        case OpKind::SepConv: {
            const auto& a = op.as<SepConvAttrs>();
            const int64_t dw_out = int64_t(out.n) * in.c * out.h * out.w;
            const int64_t macs = dw_out * a.kernel * a.kernel + out_elems * in.c;
            return 2 * macs + (a.bias ? out_elems : 0) + (a.pre_relu ? in.elements() : 0) +
                   (a.post_relu ? out_elems : 0);
        }
        case OpKind::MaxPool:
        case OpKind::AvgPool: {
            const auto& a = op.as<PoolAttrs>();
            if (a.global) return in.elements();
            return out_elems * a.kernel_h * a.kernel_w;
        }
        case OpKind::Add: {
            const auto& a = op.as<AddAttrs>();
            return out_elems * int64_t(op.inputs.size() - 1) + (a.relu ? out_elems : 0);
        }
        case OpKind::Relu: return out_elems;
        case OpKind::Linear: {
            const auto& a = op.as<LinearAttrs>();
            return 2 * int64_t(out.n) * a.out_features * (int64_t(in.c) * in.h * in.w) +
                   (a.bias ? out_elems : 0);
        }
        case OpKind::Softmax: return 3 * out_elems;
        case OpKind::Concat:
        case OpKind::Identity:
        case OpKind::ChannelShuffle:
        case OpKind::ChannelSlice:
        case OpKind::SpatialPad:
        case OpKind::StridedSlice:
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth:
        case OpKind::Flatten: return 0;
        case OpKind::PRelu: return 2 * out_elems;  // compare, multiply
        case OpKind::RadixSoftmax: return 4 * out_elems;  // max, exp, sum, divide
        case OpKind::GroupNorm:  // mean, variance, normalise, scale and shift, as ChannelNorm
            return 7 * out_elems;
        case OpKind::Activation: return out_elems * activation_flops(op.as<ActivationAttrs>());
        case OpKind::Binary:
        case OpKind::ChannelAffine: return out_elems * (op.kind == OpKind::Binary ? 1 : 2);
        case OpKind::Resize:  // bilinear: four taps weighted and summed
            return op.as<ResizeAttrs>().mode == ResizeMode::Bilinear ? 7 * out_elems : 0;
        case OpKind::ConvTranspose: {
            // Every input pixel scatters into kh x kw outputs of its group's channels.
            const auto& a = op.as<ConvTransposeAttrs>();
            const int64_t macs =
                in.elements() * (a.out_channels / a.groups) * a.kernel_h * a.kernel_w;
            return 2 * macs + (a.bias ? out_elems : 0);
        }
        case OpKind::ChannelNorm:  // mean, variance, normalise, scale and shift
            return 7 * out_elems;
    }
    return 0;
}

int64_t bytes_moved(const Graph& graph, int op_id, int element_bytes) {
    const Op& op = graph.op(op_id);
    int64_t elems = op.output.elements() + param_count(graph, op_id);
    for (int src : op.inputs) elems += graph.tensor_shape(src).elements();
    return elems * int64_t(element_bytes);
}

GraphTotals totals(const Graph& graph) {
    GraphTotals t;
    for (const Op& op : graph.ops()) {
        t.flops += flops(graph, op.id);
        t.params += param_count(graph, op.id);
        t.bytes += bytes_moved(graph, op.id);
    }
    return t;
}

}  // namespace iostune
