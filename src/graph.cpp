#include "src/graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "src/error.h"
#include "src/operator_info.h"
#include "src/quoted.h"
#include "src/shape_limits.h"

namespace iostune {

namespace {

constexpr std::array<std::pair<OpKind, const char*>, kOpKindCount> kKindNames{{
    {OpKind::Conv, "conv"},
    {OpKind::SepConv, "sepconv"},
    {OpKind::MaxPool, "maxpool"},
    {OpKind::AvgPool, "avgpool"},
    {OpKind::Concat, "concat"},
    {OpKind::Add, "add"},
    {OpKind::Relu, "relu"},
    {OpKind::Linear, "linear"},
    {OpKind::Softmax, "softmax"},
    {OpKind::Identity, "identity"},
    {OpKind::Activation, "activation"},
    {OpKind::Binary, "binary"},
    {OpKind::ChannelAffine, "channel_affine"},
    {OpKind::ChannelShuffle, "channel_shuffle"},
    {OpKind::ChannelSlice, "channel_slice"},
    {OpKind::Resize, "resize"},
    {OpKind::ConvTranspose, "conv_transpose"},
    {OpKind::ChannelNorm, "channel_norm"},
    {OpKind::SpatialPad, "spatial_pad"},
    {OpKind::PRelu, "prelu"},
    {OpKind::GroupNorm, "group_norm"},
    {OpKind::RadixSoftmax, "radix_softmax"},
    {OpKind::StridedSlice, "strided_slice"},
    {OpKind::DepthToSpace, "depth_to_space"},
    {OpKind::SpaceToDepth, "space_to_depth"},
    {OpKind::Flatten, "flatten"},
}};

constexpr std::array<const char*, kActivationFunctionCount> kActivationNames{
    "clip", "sigmoid", "silu", "hardsigmoid", "hardswish", "leakyrelu", "gelu", "tanh"};
constexpr std::array<const char*, kBinaryOpCount> kBinaryOpNames{"add", "sub", "mul", "div"};
constexpr std::array<const char*, kResizeModeCount> kResizeModeNames{"nearest", "bilinear"};
constexpr std::array<const char*, kBlockOrderCount> kBlockOrderNames{"dcr", "crd"};

template <class Names>
const char* enum_name(const Names& names, int value) {
    return value >= 0 && value < int(names.size()) ? names[size_t(value)] : "?";
}

// Output sizes are computed in 64 bits: every operand is an int, so no product or sum of two
// or three of them wraps, and infer_shape() refuses a result past int instead of cutting it.

// torch.nn.ConvTranspose2d's output size along one axis.
int64_t transposed_output(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                          int64_t output_padding, int64_t dilation) {
    return (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1;
}

// torch.nn.{Max,Avg}Pool2d / Conv2d output size, including ceil_mode's rule that the last window
// must start inside the (left-padded) input.
int64_t window_output(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                      bool ceil_mode) {
    const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
    if (span < 0) return 0;
    int64_t out = ceil_mode ? (span + stride - 1) / stride + 1 : span / stride + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad) --out;
    return out;
}

void expect_inputs(const std::string& op_name, OpKind kind, size_t got, size_t min, size_t max) {
    if (got < min || got > max) {
        throw Error(fmt::format("op {} ({}): expects {} input(s), got {}", quoted_name(op_name),
                                to_string(kind),
                                min == max ? fmt::format("{}", min)
                                           : fmt::format("{} or more", min),
                                got));
    }
}

bool attrs_match_kind(OpKind kind, const OpAttrs& attrs) {
    switch (kind) {
        case OpKind::Conv: return std::holds_alternative<ConvAttrs>(attrs);
        case OpKind::SepConv: return std::holds_alternative<SepConvAttrs>(attrs);
        case OpKind::MaxPool:
        case OpKind::AvgPool: return std::holds_alternative<PoolAttrs>(attrs);
        case OpKind::Concat: return std::holds_alternative<ConcatAttrs>(attrs);
        case OpKind::Add: return std::holds_alternative<AddAttrs>(attrs);
        case OpKind::Relu: return std::holds_alternative<ReluAttrs>(attrs);
        case OpKind::Linear: return std::holds_alternative<LinearAttrs>(attrs);
        case OpKind::Softmax: return std::holds_alternative<SoftmaxAttrs>(attrs);
        case OpKind::Identity: return std::holds_alternative<IdentityAttrs>(attrs);
        case OpKind::Activation: return std::holds_alternative<ActivationAttrs>(attrs);
        case OpKind::Binary: return std::holds_alternative<BinaryAttrs>(attrs);
        case OpKind::ChannelAffine: return std::holds_alternative<ChannelAffineAttrs>(attrs);
        case OpKind::ChannelShuffle: return std::holds_alternative<ChannelShuffleAttrs>(attrs);
        case OpKind::ChannelSlice: return std::holds_alternative<ChannelSliceAttrs>(attrs);
        case OpKind::Resize: return std::holds_alternative<ResizeAttrs>(attrs);
        case OpKind::ConvTranspose: return std::holds_alternative<ConvTransposeAttrs>(attrs);
        case OpKind::ChannelNorm: return std::holds_alternative<ChannelNormAttrs>(attrs);
        case OpKind::SpatialPad: return std::holds_alternative<SpatialPadAttrs>(attrs);
        case OpKind::PRelu: return std::holds_alternative<PReluAttrs>(attrs);
        case OpKind::GroupNorm: return std::holds_alternative<GroupNormAttrs>(attrs);
        case OpKind::RadixSoftmax: return std::holds_alternative<RadixSoftmaxAttrs>(attrs);
        case OpKind::StridedSlice: return std::holds_alternative<StridedSliceAttrs>(attrs);
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth: return std::holds_alternative<DepthSpaceAttrs>(attrs);
        case OpKind::Flatten: return std::holds_alternative<FlattenAttrs>(attrs);
    }
    return false;
}

// What a convolution and a transposed one both require of their attributes: groups dividing
// both channel counts (`fail` makes that error: it depends on the input) and a positive kernel,
// stride and dilation, padding >= 0 (`invalid` makes that one).
template <class Attrs, class Fail, class Invalid>
void check_conv_window(const Attrs& a, int in_channels, const Fail& fail,
                       const Invalid& invalid) {
    if (a.groups <= 0 || in_channels % a.groups != 0 || a.out_channels % a.groups != 0)
        throw fail(fmt::format("{} input channels / {} output channels not divisible by "
                               "groups={}",
                               in_channels, a.out_channels, a.groups));
    if (a.kernel_h <= 0 || a.kernel_w <= 0 || a.stride_h <= 0 || a.stride_w <= 0 ||
        a.dilation_h <= 0 || a.dilation_w <= 0 || a.pad_h < 0 || a.pad_w < 0)
        throw invalid("kernel, stride and dilation must be positive and padding >= 0");
}

// A weight tensor is a tensor too: held within one tensor's limit, so param_count() and every
// weight buffer stay in range whatever the attributes say.
template <class Invalid>
void check_weight_size(const std::vector<int64_t>& dims, const Invalid& invalid) {
    for (int64_t d : dims)
        if (d <= 0) return;  // no weights: the output's shape says what is wrong
    if (const auto problem = tensor_size_problem(dims))
        throw invalid(fmt::format("the weights are too large: {}", *problem));
}

// What an activation requires, as an Activation op or fused into a convolution.
template <class Fail>
void check_activation(const ActivationAttrs& a, const Fail& fail) {
    if (int(a.function) < 0 || int(a.function) >= kActivationFunctionCount)
        throw fail("unknown activation function");
    if (a.function == ActivationFunction::Clip && !(a.alpha <= a.beta))
        throw fail(fmt::format("clip bounds [{}, {}] are empty", a.alpha, a.beta));
}

// Each axis of a strided slice reads `count` indices from `begin` in steps of `step`, all inside
// the input's extent along it.
template <class Fail, class Invalid>
Shape strided_slice_shape(const StridedSliceAttrs& a, const Shape& in, const Fail& fail,
                          const Invalid& invalid) {
    const auto axis = [&](const char* name, int begin, int step, int count, int size) {
        if (step == 0 || count <= 0)
            throw invalid(fmt::format("{}: step {} must be nonzero and count {} positive", name,
                                      step, count));
        const int64_t last = int64_t(begin) + int64_t(count - 1) * step;
        if (begin < 0 || begin >= size || last < 0 || last >= size)
            throw fail(fmt::format("{}: {} indices from {} in steps of {} leave [0, {})", name,
                                   count, begin, step, size));
    };
    axis("channels", a.c_begin, a.c_step, a.c_count, in.c);
    axis("height", a.h_begin, a.h_step, a.h_count, in.h);
    axis("width", a.w_begin, a.w_step, a.w_count, in.w);
    return {in.n, a.c_count, a.h_count, a.w_count};
}

// depth_to_space needs C divisible by block^2, space_to_depth H and W divisible by block.
template <class Fail, class Invalid>
Shape depth_space_shape(bool to_space, const DepthSpaceAttrs& a, const Shape& in,
                        const Fail& fail, const Invalid& invalid) {
    if (a.block <= 0) throw invalid(fmt::format("block {} must be positive", a.block));
    if (int(a.order) < 0 || int(a.order) >= kBlockOrderCount) throw invalid("unknown block order");
    const int64_t area = int64_t(a.block) * a.block;
    const auto narrow = [&](int64_t v) {
        if (v > std::numeric_limits<int>::max())
            throw fail(fmt::format("block {} makes a size of {}", a.block, v));
        return int(v);
    };
    if (to_space) {
        if (in.c % area != 0)
            throw fail(fmt::format("{} channels do not divide into blocks of {}x{}", in.c, a.block,
                                   a.block));
        return {in.n, int(in.c / area), narrow(int64_t(in.h) * a.block),
                narrow(int64_t(in.w) * a.block)};
    }
    if (in.h % a.block != 0 || in.w % a.block != 0)
        throw fail(fmt::format("a {}x{} map does not divide into {}x{} blocks", in.h, in.w, a.block,
                               a.block));
    return {in.n, narrow(in.c * area), in.h / a.block, in.w / a.block};
}

}  // namespace

const char* to_string(OpKind kind) {
    for (const auto& [k, name] : kKindNames)
        if (k == kind) return name;
    return "?";
}

std::optional<OpKind> op_kind_from_string(const std::string& name) {
    for (const auto& [k, n] : kKindNames)
        if (name == n) return k;
    return std::nullopt;
}

const char* to_string(ActivationFunction function) {
    return enum_name(kActivationNames, int(function));
}
const char* to_string(BinaryOp op) { return enum_name(kBinaryOpNames, int(op)); }
const char* to_string(ResizeMode mode) { return enum_name(kResizeModeNames, int(mode)); }
const char* to_string(BlockOrder order) { return enum_name(kBlockOrderNames, int(order)); }
std::string to_string(const ActivationAttrs& a) {
    return fmt::format("{}({},{})", to_string(a.function), a.alpha, a.beta);
}

Shape infer_shape(OpKind kind, const OpAttrs& attrs, const std::vector<Shape>& in,
                  const std::string& op_name) {
    if (!attrs_match_kind(kind, attrs))
        throw Error(fmt::format("op {}: attributes do not belong to a {} op", quoted_name(op_name),
                                to_string(kind)));
    // A shape the inputs cannot have, or attributes no input could make valid.
    auto fail = [&](const std::string& why) -> Error {
        return Error(fmt::format("op {} ({}): shape mismatch: {}", quoted_name(op_name),
                                 to_string(kind), why));
    };
    auto invalid = [&](const std::string& why) -> Error {
        return Error(fmt::format("op {} ({}): invalid attributes: {}", quoted_name(op_name),
                                 to_string(kind), why));
    };
    // An output shape computed in 64 bits: empty is a mismatch, too large for a tensor an error
    // saying so; never a value cut to int.
    auto positive = [&](std::array<int64_t, 4> s) {
        if (s[0] <= 0 || s[1] <= 0 || s[2] <= 0 || s[3] <= 0)
            throw fail(fmt::format("output would be {}", fmt::join(s, "x")));
        if (const auto problem = tensor_size_problem({s.begin(), s.end()}))
            throw Error(fmt::format("op {} ({}): the output is too large: {}", quoted_name(op_name),
                                    to_string(kind), *problem));
        return Shape{int(s[0]), int(s[1]), int(s[2]), int(s[3])};
    };
    switch (kind) {
        case OpKind::Conv: {
            const auto& a = std::get<ConvAttrs>(attrs);
            expect_inputs(op_name, kind, in.size(), a.residual ? 2 : 1, a.residual ? 2 : 1);
            check_conv_window(a, in[0].c, fail, invalid);
            check_weight_size({a.out_channels, in[0].c / a.groups, a.kernel_h, a.kernel_w},
                              invalid);
            if (int(a.relu) + int(a.activation.has_value()) + int(a.prelu) > 1)
                throw invalid("a convolution fuses one of a ReLU, an activation and a PReLU");
            if (a.activation) check_activation(*a.activation, invalid);
            const Shape out = positive(
                {in[0].n, a.out_channels,
                 window_output(in[0].h, a.kernel_h, a.stride_h, a.pad_h, a.dilation_h, false),
                 window_output(in[0].w, a.kernel_w, a.stride_w, a.pad_w, a.dilation_w, false)});
            if (a.residual && !(in[1] == out))
                throw fail(fmt::format("the residual input is {}x{}x{}x{}, the output {}x{}x{}x{} "
                                       "(they must be equal)",
                                       in[1].n, in[1].c, in[1].h, in[1].w, out.n, out.c, out.h,
                                       out.w));
            return out;
        }
        case OpKind::SepConv: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<SepConvAttrs>(attrs);
            if (a.kernel <= 0 || a.stride <= 0 || a.dilation <= 0 || a.pad < 0)
                throw invalid("kernel, stride and dilation must be positive and padding >= 0");
            check_weight_size({in[0].c, 1, a.kernel, a.kernel}, invalid);
            check_weight_size({a.out_channels, in[0].c, 1, 1}, invalid);
            const int64_t h = window_output(in[0].h, a.kernel, a.stride, a.pad, a.dilation, false);
            const int64_t w = window_output(in[0].w, a.kernel, a.stride, a.pad, a.dilation, false);
            return positive({in[0].n, a.out_channels, h, w});
        }
        case OpKind::MaxPool:
        case OpKind::AvgPool: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<PoolAttrs>(attrs);
            if (a.global) return Shape{in[0].n, in[0].c, 1, 1};
            if (a.kernel_h <= 0 || a.kernel_w <= 0 || a.stride_h <= 0 || a.stride_w <= 0 ||
                a.pad_h < 0 || a.pad_w < 0)
                throw invalid("kernel and stride must be positive and padding >= 0");
            if (2 * int64_t(a.pad_h) > a.kernel_h || 2 * int64_t(a.pad_w) > a.kernel_w)
                throw invalid("padding must be at most half the kernel size");
            return positive({in[0].n, in[0].c,
                             window_output(in[0].h, a.kernel_h, a.stride_h, a.pad_h, 1, a.ceil_mode),
                             window_output(in[0].w, a.kernel_w, a.stride_w, a.pad_w, 1, a.ceil_mode)});
        }
        case OpKind::Concat: {
            expect_inputs(op_name, kind, in.size(), 1, size_t(-1));
            int64_t channels = 0;
            for (size_t i = 0; i < in.size(); ++i) {
                if (in[i].n != in[0].n || in[i].h != in[0].h || in[i].w != in[0].w)
                    throw fail(fmt::format("input {} is {}x{}x{}x{}, input 0 is {}x{}x{}x{} "
                                           "(all but channels must agree)",
                                           i, in[i].n, in[i].c, in[i].h, in[i].w, in[0].n, in[0].c,
                                           in[0].h, in[0].w));
                channels += in[i].c;
            }
            return positive({in[0].n, channels, in[0].h, in[0].w});
        }
        case OpKind::Add: {
            expect_inputs(op_name, kind, in.size(), 2, size_t(-1));
            for (size_t i = 1; i < in.size(); ++i)
                if (!(in[i] == in[0]))
                    throw fail(fmt::format("input {} is {}x{}x{}x{}, input 0 is {}x{}x{}x{}", i,
                                           in[i].n, in[i].c, in[i].h, in[i].w, in[0].n, in[0].c,
                                           in[0].h, in[0].w));
            return in[0];
        }
        case OpKind::Relu:
        case OpKind::Softmax:
        case OpKind::Identity:
        case OpKind::ChannelAffine:
        case OpKind::ChannelNorm:
        case OpKind::PRelu:
            expect_inputs(op_name, kind, in.size(), 1, 1);
            return in[0];
        case OpKind::GroupNorm: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<GroupNormAttrs>(attrs);
            if (!(a.eps >= 0.0f)) throw invalid(fmt::format("eps {} must be >= 0", a.eps));
            if (a.groups <= 0 || in[0].c % a.groups != 0)
                throw fail(fmt::format("{} channels do not split into {} groups", in[0].c,
                                       a.groups));
            return in[0];
        }
        case OpKind::RadixSoftmax: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<RadixSoftmaxAttrs>(attrs);
            if (a.radix <= 0 || a.cardinality <= 0)
                throw invalid("radix and cardinality must be positive");
            if (in[0].c % (int64_t(a.radix) * a.cardinality) != 0)
                throw fail(fmt::format("{} channels do not split into cardinality {} x radix {} "
                                       "groups",
                                       in[0].c, a.cardinality, a.radix));
            return in[0];
        }
        case OpKind::StridedSlice:
            expect_inputs(op_name, kind, in.size(), 1, 1);
            return strided_slice_shape(std::get<StridedSliceAttrs>(attrs), in[0], fail, invalid);
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth:
            expect_inputs(op_name, kind, in.size(), 1, 1);
            return depth_space_shape(kind == OpKind::DepthToSpace, std::get<DepthSpaceAttrs>(attrs),
                                     in[0], fail, invalid);
        case OpKind::Flatten: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const int64_t features = int64_t(in[0].c) * in[0].h * in[0].w;
            if (features > std::numeric_limits<int>::max())
                throw fail(fmt::format("{} features do not fit a channel count", features));
            return {in[0].n, int(features), 1, 1};
        }
        case OpKind::Activation: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            check_activation(std::get<ActivationAttrs>(attrs), invalid);
            return in[0];
        }
        case OpKind::Binary: {
            expect_inputs(op_name, kind, in.size(), 2, 2);
            if (int(std::get<BinaryAttrs>(attrs).op) < 0 ||
                int(std::get<BinaryAttrs>(attrs).op) >= kBinaryOpCount)
                throw invalid("unknown binary operation");
            auto dim = [&](int a, int b, const char* axis) {
                if (a != b && a != 1 && b != 1)
                    throw fail(fmt::format("inputs {}x{}x{}x{} and {}x{}x{}x{} do not broadcast "
                                           "along {} (sizes must agree or one be 1)",
                                           in[0].n, in[0].c, in[0].h, in[0].w, in[1].n, in[1].c,
                                           in[1].h, in[1].w, axis));
                return std::max(a, b);
            };
            if (in[0].n != in[1].n)
                throw fail(fmt::format("batch sizes {} and {} differ", in[0].n, in[1].n));
            return positive({in[0].n, dim(in[0].c, in[1].c, "channels"),
                             dim(in[0].h, in[1].h, "height"), dim(in[0].w, in[1].w, "width")});
        }
        case OpKind::ChannelShuffle: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const int groups = std::get<ChannelShuffleAttrs>(attrs).groups;
            if (groups <= 0 || in[0].c % groups != 0)
                throw fail(fmt::format("{} channels do not split into {} groups", in[0].c, groups));
            return in[0];
        }
        case OpKind::ChannelSlice: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<ChannelSliceAttrs>(attrs);
            if (a.begin < 0 || a.end <= a.begin || a.end > in[0].c)
                throw fail(fmt::format("channels [{}, {}) are not a non-empty range of the input's "
                                       "{}",
                                       a.begin, a.end, in[0].c));
            return Shape{in[0].n, a.end - a.begin, in[0].h, in[0].w};
        }
        case OpKind::Resize: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<ResizeAttrs>(attrs);
            if (int(a.mode) < 0 || int(a.mode) >= kResizeModeCount)
                throw invalid("unknown resize mode");
            if (a.align_corners && a.mode != ResizeMode::Bilinear)
                throw invalid("align_corners applies to bilinear resizing only");
            return positive({in[0].n, in[0].c, a.out_h, a.out_w});
        }
        case OpKind::SpatialPad: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<SpatialPadAttrs>(attrs);
            const int64_t h = int64_t(in[0].h) + a.top + a.bottom;
            const int64_t w = int64_t(in[0].w) + a.left + a.right;
            if (h < 1 || w < 1)
                throw fail(fmt::format("padding {}x{} by top {}, bottom {}, left {}, right {} "
                                       "leaves {}x{}; the output must keep at least one row and "
                                       "column",
                                       in[0].h, in[0].w, a.top, a.bottom, a.left, a.right, h, w));
            return positive({in[0].n, in[0].c, h, w});
        }
        case OpKind::ConvTranspose: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<ConvTransposeAttrs>(attrs);
            check_conv_window(a, in[0].c, fail, invalid);
            check_weight_size({in[0].c, a.out_channels / a.groups, a.kernel_h, a.kernel_w},
                              invalid);
            if (a.output_padding_h < 0 || a.output_padding_w < 0 ||
                (a.output_padding_h >= a.stride_h && a.output_padding_h >= a.dilation_h) ||
                (a.output_padding_w >= a.stride_w && a.output_padding_w >= a.dilation_w))
                throw invalid(
                    "output_padding must be >= 0 and smaller than the stride or dilation");
            return positive({in[0].n, a.out_channels,
                             transposed_output(in[0].h, a.kernel_h, a.stride_h, a.pad_h,
                                               a.output_padding_h, a.dilation_h),
                             transposed_output(in[0].w, a.kernel_w, a.stride_w, a.pad_w,
                                               a.output_padding_w, a.dilation_w)});
        }
        case OpKind::Linear: {
            expect_inputs(op_name, kind, in.size(), 1, 1);
            const auto& a = std::get<LinearAttrs>(attrs);
            if (a.out_features <= 0) throw invalid("out_features must be positive");
            check_weight_size({a.out_features, int64_t(in[0].c) * in[0].h * in[0].w}, invalid);
            return positive({in[0].n, a.out_features, 1, 1});
        }
    }
    throw invalid("unknown operator kind");
}

Graph::Graph(std::string name, Shape input) : name_(std::move(name)) { add_input(input); }

int Graph::add_input(Shape input) {
    if (input.n <= 0 || input.c <= 0 || input.h <= 0 || input.w <= 0)
        throw Error(fmt::format("model {}: input shape {} must be positive", quoted_name(name_),
                                shape_text(input)));
    if (const auto problem = tensor_size_problem({input.n, input.c, input.h, input.w}))
        throw Error(
            fmt::format("model {}: the input is too large: {}", quoted_name(name_), *problem));
    if (!inputs_.empty() && input.n != inputs_.front().n)
        throw Error(fmt::format("model {}: input {} has batch {}, input 0 has {} (one batch "
                                "for the whole graph)",
                                quoted_name(name_), inputs_.size(), input.n, inputs_.front().n));
    inputs_.push_back(input);
    return graph_input_id(int(inputs_.size()) - 1);
}

std::vector<int> Graph::outputs() const {
    if (!outputs_.empty()) return outputs_;
    return {size() - 1};
}

const Shape& Graph::output_shape() const {
    if (ops_.empty()) return inputs_.front();
    return ops_.at(size_t(output_id())).output;
}

void Graph::set_outputs(std::vector<int> outputs) {
    for (size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i] < 0 || outputs[i] >= size())
            throw Error(fmt::format("model {}: output {} names op {}, but the ops are 0..{}",
                                    quoted_name(name_), i, outputs[i], size() - 1));
        for (size_t j = 0; j < i; ++j)
            if (outputs[j] == outputs[i])
                throw Error(fmt::format("model {}: op {} is named as an output twice",
                                        quoted_name(name_), outputs[i]));
    }
    outputs_ = std::move(outputs);
}

void Graph::set_members(std::vector<GraphMember> members) {
    int next = 0;
    std::vector<int> member_outputs;  // every member's outputs, member after member
    for (const GraphMember& m : members) {
        const bool outputs_inside =
            !m.outputs.empty() && std::all_of(m.outputs.begin(), m.outputs.end(), [&](int id) {
                return id >= m.first_op && id < m.end_op;
            });
        if (m.first_op != next || m.end_op <= m.first_op || m.end_op > size() || !outputs_inside ||
            !is_graph_input(m.input) || graph_input_index(m.input) >= input_count())
            throw Error(fmt::format("model {}: member {} (ops {}..{}, outputs {}) does not "
                                    "tile the graph's ops in order",
                                    quoted_name(name_), quoted_name(m.name), m.first_op,
                                    m.end_op - 1,
                                    fmt::join(m.outputs, ",")));
        next = m.end_op;
        member_outputs.insert(member_outputs.end(), m.outputs.begin(), m.outputs.end());
    }
    if (members.empty()) {
        members_.clear();
        return;
    }
    if (next != size())
        throw Error(fmt::format("model {}: the members cover ops 0..{} of 0..{}",
                                quoted_name(name_),
                                next - 1, size() - 1));
    // Output k of a set is then found from its members alone (model_set.h, output_origins).
    if (member_outputs != outputs())
        throw Error(fmt::format("model {}: the graph's outputs ({}) are not its members' "
                                "outputs in member order ({})",
                                quoted_name(name_), fmt::join(outputs(), ","),
                                fmt::join(member_outputs, ",")));
    members_ = std::move(members);
}

int Graph::member_of(int op_id) const {
    for (size_t m = 0; m < members_.size(); ++m)
        if (op_id >= members_[m].first_op && op_id < members_[m].end_op) return int(m);
    return -1;
}

const Shape& Graph::tensor_shape(int id) const {
    if (is_graph_input(id)) return inputs_.at(size_t(graph_input_index(id)));
    return ops_.at(size_t(id)).output;
}

int Graph::add(OpKind kind, OpAttrs attrs, std::vector<int> inputs, std::string name, int cell) {
    const int id = size();
    if (name.empty()) name = fmt::format("{}_{}", to_string(kind), id);
    std::vector<Shape> in_shapes;
    for (int src : inputs) {
        if (is_graph_input(src) ? graph_input_index(src) >= input_count() : src >= id)
            throw Error(fmt::format("op {} (#{}): input {} {} (inputs must be earlier ops or "
                                    "the graph's inputs; anything else is a dangling or cyclic "
                                    "edge)",
                                    quoted_name(name), id, src,
                                    src == id  ? "refers to itself"
                                    : src > id ? "refers to a later op"
                                               : "does not exist"));
        in_shapes.push_back(tensor_shape(src));
    }
    Op op;
    op.id = id;
    op.name = std::move(name);
    op.kind = kind;
    op.output = infer_shape(kind, attrs, in_shapes, op.name);
    op.attrs = std::move(attrs);
    op.inputs = std::move(inputs);
    op.cell = cell;
    ops_.push_back(std::move(op));
    if (weights_state_ != WeightsState::Absent) params_.emplace_back();
    return id;
}

std::vector<std::vector<int>> Graph::consumers() const {
    std::vector<std::vector<int>> out(ops_.size());
    for (const Op& op : ops_)
        for (int src : op.inputs)
            if (!is_graph_input(src) && (out[size_t(src)].empty() || out[size_t(src)].back() != op.id))
                out[size_t(src)].push_back(op.id);
    return out;
}

Graph Graph::with_batch(int batch) const {
    Graph g(name_, {batch, inputs_[0].c, inputs_[0].h, inputs_[0].w});
    for (size_t k = 1; k < inputs_.size(); ++k)
        g.add_input({batch, inputs_[k].c, inputs_[k].h, inputs_[k].w});
    for (const Op& op : ops_) g.add(op.kind, op.attrs, op.inputs, op.name, op.cell);
    g.outputs_ = outputs_;
    g.members_ = members_;
    if (weights_state_ != WeightsState::Absent) g.set_params(params_, weights_state_);
    return g;
}

void Graph::set_params(std::vector<std::vector<ParamTensor>> params, WeightsState state) {
    if (state == WeightsState::Absent) {
        drop_params();
        return;
    }
    if (params.size() != ops_.size())
        throw Error(fmt::format("model {}: {} parameter sets given for {} ops", quoted_name(name_),
                                params.size(), ops_.size()));
    for (const Op& op : ops_) {
        const auto expected = param_shapes(*this, op.id);
        const auto& got = params[size_t(op.id)];
        if (got.size() != expected.size())
            throw Error(fmt::format("op {}: expects {} parameter tensors, got {}",
                                    quoted_name(op.name),
                                    expected.size(), got.size()));
        for (size_t i = 0; i < got.size(); ++i) {
            int64_t count = 1;
            for (int d : expected[i]) count *= d;
            if (got[i].dims != expected[i] || int64_t(got[i].values.size()) != count)
                throw Error(fmt::format("op {}: parameter {} has {} values with dims [{}], "
                                        "expected dims [{}]",
                                        quoted_name(op.name), i, got[i].values.size(),
                                        fmt::join(got[i].dims, ","), fmt::join(expected[i], ",")));
        }
    }
    params_ = std::move(params);
    weights_state_ = state;
}

void Graph::drop_params() {
    params_.clear();
    weights_state_ = WeightsState::Absent;
}

}  // namespace iostune
