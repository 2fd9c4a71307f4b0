#include "src/weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "src/error.h"
#include "src/operator_info.h"

namespace iostune {

namespace {

// Scaling: walking the graph in order, each op's weights are drawn for the estimated second
// moment E[x^2] of its input, so every conv / linear starts from unit-scale pre-activations
// however deep it sits; the estimate is then carried through the op (see output_moment).

// Second moment E[x^2] of a uniform [-1, 1) input.
constexpr double kInputSecondMoment = 1.0 / 3.0;
// Every conv / linear is scaled so its pre-activation second moment is this.
constexpr double kTargetSecondMoment = 1.0;
// Biases stand in for folded batch-norm shifts: small next to the unit-scale activations.
constexpr double kBiasBound = 0.1;
// Per-channel scales (ChannelAffine, ChannelNorm, GroupNorm) are drawn from 1 +- this.
constexpr double kScaleSpread = 0.25;
// PReLU slopes are drawn from torch's initial 0.25 +- this (trained ones spread around it).
constexpr double kSlopeCentre = 0.25, kSlopeSpread = 0.2;
// Two factors the independence model gets wrong, measured on the zoo models with the CPU
// reference. A max pool raises the second moment (5x for a 3x3 window over fresh conv outputs,
// 1.5x over already-pooled maps). A ReLU after a residual Add keeps most of the sum, because the
// identity input is already non-negative. Each estimate error compounds along the main path
// (once per pool, once per residual block), so these keep every activation of the zoo between
// about 0.15 and 6 in second moment instead of drifting by orders of magnitude.
constexpr double kMaxPoolGain = 2.0;
constexpr double kResidualReluKeep = 0.85;

// mt19937_64's output sequence is fixed by the standard, but std::uniform_real_distribution is
// not; drawing the floats ourselves keeps the values identical across standard libraries.
class Uniform {
public:
    Uniform(uint64_t seed, uint64_t stream) {
        std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(stream),
                          uint32_t(stream >> 32)};
        engine_.seed(seq);
    }

    // Uniform in [-bound, bound): 24 random bits give a float in [0, 1) exactly.
    float symmetric(float bound) {
        const float unit = float(engine_() >> 40) * 0x1.0p-24f;
        return bound * (2.0f * unit - 1.0f);
    }

private:
    std::mt19937_64 engine_;
};

// A bound `a` for uniform(-a, a) weights (variance a^2 / 3) that brings an input with second
// moment `input_moment` through `fan_in` products to kTargetSecondMoment. For inputs that come
// out of a ReLU (moment 1/2) this is He's uniform bound sqrt(6 / fan_in).
double weight_bound(int64_t fan_in, double input_moment) {
    return std::sqrt(3.0 * kTargetSecondMoment / (double(fan_in) * input_moment));
}

ParamTensor filled(const std::vector<int>& dims, double bound, Uniform& rng) {
    ParamTensor t;
    t.dims = dims;
    int64_t count = 1;
    for (int d : dims) count *= d;
    t.values.resize(size_t(count));
    for (float& v : t.values) v = rng.symmetric(float(bound));
    return t;
}

ParamTensor slopes(const std::vector<int>& dims, Uniform& rng) {
    ParamTensor t = filled(dims, kSlopeSpread, rng);
    for (float& v : t.values) v += float(kSlopeCentre);
    return t;
}

double input_moment(const Op& op, const std::vector<double>& moments) {
    if (op.inputs.empty()) return kInputSecondMoment;
    const int src = op.inputs[0];
    return is_graph_input(src) ? kInputSecondMoment : moments[size_t(src)];
}

// Rough second moments after an activation of a zero-mean input with second moment m: the
// rectifying ones keep about half, the saturating ones are bounded.
double activation_moment(const ActivationAttrs& a, double m) {
    switch (a.function) {
        case ActivationFunction::Clip:
        case ActivationFunction::LeakyRelu:
        case ActivationFunction::Silu:
        case ActivationFunction::HardSwish:
        case ActivationFunction::Gelu: return 0.5 * m;
        case ActivationFunction::Sigmoid:
        case ActivationFunction::HardSigmoid: return 0.25 + 0.05 * std::min(m, 1.0);
        case ActivationFunction::Tanh: return std::min(m, 0.6);
    }
    return m;
}

// Estimated second moment of the op's output, assuming independent zero-mean weights; average
// pools and concats keep the moment (close enough: each conv re-normalises to its own input).
double output_moment(const Graph& graph, const Op& op, const std::vector<double>& moments) {
    auto moment_of = [&](int src) {
        return is_graph_input(src) ? kInputSecondMoment : moments[size_t(src)];
    };
    const double bias_moment = kBiasBound * kBiasBound / 3.0;
    switch (op.kind) {
        case OpKind::Conv: {
            const auto& a = op.as<ConvAttrs>();
            // conv (+ z, as the Add it fused), then its ReLU or activation
            double moment = kTargetSecondMoment + bias_moment;
            if (a.residual) moment += moment_of(op.inputs[1]);
            if (a.relu) moment *= a.residual ? kResidualReluKeep : 0.5;
            if (a.prelu) moment *= 0.5;
            return a.activation ? activation_moment(*a.activation, moment) : moment;
        }
        case OpKind::SepConv:  // then its ReLU, when the fusion pass moved one there
            return (kTargetSecondMoment + bias_moment) *
                   (op.as<SepConvAttrs>().post_relu ? 0.5 : 1.0);
        case OpKind::Linear: return kTargetSecondMoment + bias_moment;
        case OpKind::Relu:
        case OpKind::PRelu: return 0.5 * moment_of(op.inputs[0]);
        case OpKind::Add: {
            double sum = 0.0;
            for (int src : op.inputs) sum += moment_of(src);
            return op.as<AddAttrs>().relu ? kResidualReluKeep * sum : sum;
        }
        case OpKind::Concat: {
            double weighted = 0.0;
            for (int src : op.inputs) weighted += moment_of(src) * graph.tensor_shape(src).c;
            return weighted / op.output.c;
        }
        case OpKind::Softmax: return 1.0 / double(op.output.c);
        case OpKind::MaxPool:
            return op.as<PoolAttrs>().global ? moment_of(op.inputs[0])
                                             : kMaxPoolGain * moment_of(op.inputs[0]);
        case OpKind::AvgPool:
        case OpKind::Identity:
        case OpKind::ChannelShuffle:
        case OpKind::ChannelSlice:
        case OpKind::SpatialPad:
        case OpKind::Resize:
        case OpKind::ChannelAffine:
        case OpKind::StridedSlice:
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth:
        case OpKind::Flatten: return moment_of(op.inputs[0]);
        case OpKind::ConvTranspose: return kTargetSecondMoment + bias_moment;
        case OpKind::ChannelNorm:
        case OpKind::GroupNorm: return 1.0;
        case OpKind::RadixSoftmax: {  // weights near 1 / radix
            const double radix = op.as<RadixSoftmaxAttrs>().radix;
            return 1.0 / (radix * radix);
        }
        case OpKind::Activation: return activation_moment(op.as<ActivationAttrs>(), moment_of(op.inputs[0]));
        case OpKind::Binary: {
            const double a = moment_of(op.inputs[0]), b = moment_of(op.inputs[1]);
            switch (op.as<BinaryAttrs>().op) {
                case BinaryOp::Add:
                case BinaryOp::Sub: return a + b;
                case BinaryOp::Mul: return a * b;
                case BinaryOp::Div: return a;  // the divisor's scale is unknowable here
            }
            return a;
        }
    }
    return kTargetSecondMoment;
}

std::vector<ParamTensor> op_params(const Graph& graph, const Op& op, double in_moment,
                                   Uniform& rng) {
    const auto shapes = param_shapes(graph, op.id);
    std::vector<ParamTensor> params;
    switch (op.kind) {
        case OpKind::Conv: {
            const auto& a = op.as<ConvAttrs>();
            const auto& w = shapes[0];  // [Cout, Cin/groups, kh, kw]
            params.push_back(filled(w, weight_bound(int64_t(w[1]) * w[2] * w[3], in_moment), rng));
            if (a.bias) params.push_back(filled(shapes[1], kBiasBound, rng));
            if (a.prelu) params.push_back(slopes(shapes.back(), rng));
            break;
        }
        case OpKind::PRelu:
            params.push_back(slopes(shapes[0], rng));
            break;
        case OpKind::SepConv: {
            const auto& a = op.as<SepConvAttrs>();
            const auto& dw = shapes[0];  // [Cin, 1, k, k]
            const auto& pw = shapes[1];  // [Cout, Cin, 1, 1]
            const double after_relu = a.pre_relu ? 0.5 * in_moment : in_moment;
            params.push_back(filled(dw, weight_bound(int64_t(dw[2]) * dw[3], after_relu), rng));
            params.push_back(filled(pw, weight_bound(pw[1], kTargetSecondMoment), rng));
            break;
        }
        case OpKind::Linear: {
            const auto& w = shapes[0];  // [out, C*H*W]
            params.push_back(filled(w, weight_bound(w[1], in_moment), rng));
            break;
        }
        case OpKind::ConvTranspose: {
            // Each output sums over Cin/groups channels and about kh*kw/(stride_h*stride_w)
            // taps of each.
            const auto& a = op.as<ConvTransposeAttrs>();
            const auto& w = shapes[0];  // [Cin, Cout/groups, kh, kw]
            const int64_t fan_in = std::max<int64_t>(
                1, int64_t(w[0] / a.groups) * w[2] * w[3] / (int64_t(a.stride_h) * a.stride_w));
            params.push_back(filled(w, weight_bound(fan_in, in_moment), rng));
            break;
        }
        case OpKind::ChannelAffine:
        case OpKind::ChannelNorm:
        case OpKind::GroupNorm: {
            // Scale (gamma) near 1, as a trained batch or layer norm's is; the shift is the bias.
            ParamTensor scale = filled(shapes[0], kScaleSpread, rng);
            for (float& v : scale.values) v += 1.0f;
            params.push_back(std::move(scale));
            break;
        }
        default:
            if (!shapes.empty())
                throw Error(fmt::format("op '{}' ({}): has {} parameter tensors but no weight "
                                        "initialiser; add one in src/weights.cpp",
                                        op.name, to_string(op.kind), shapes.size()));
            return params;
    }
    // Whatever follows the weights is the bias (param_shapes' order).
    for (size_t i = params.size(); i < shapes.size(); ++i)
        params.push_back(filled(shapes[i], kBiasBound, rng));
    return params;
}

}  // namespace

void init_random_weights(Graph& graph, uint64_t seed) {
    std::vector<std::vector<ParamTensor>> params;
    params.reserve(size_t(graph.size()));
    std::vector<double> moments;
    moments.reserve(size_t(graph.size()));
    for (const Op& op : graph.ops()) {
        // One generator per op: an op's values do not depend on the ops before it.
        Uniform rng(seed, uint64_t(op.id));
        params.push_back(op_params(graph, op, input_moment(op, moments), rng));
        moments.push_back(output_moment(graph, op, moments));
    }
    graph.set_params(std::move(params), WeightsState::SeededRandom);
}

HostTensor random_input(const Shape& shape, uint64_t seed) {
    if (shape.n <= 0 || shape.c <= 0 || shape.h <= 0 || shape.w <= 0)
        throw Error(fmt::format("random_input: shape {}x{}x{}x{} must be positive", shape.n,
                                shape.c, shape.h, shape.w));
    HostTensor t(shape);
    // A stream id no op uses (ops count up from 0), so inputs differ from any op's weights.
    Uniform rng(seed, ~uint64_t(0));
    for (float& v : t.data) v = rng.symmetric(1.0f);
    return t;
}

}  // namespace iostune
