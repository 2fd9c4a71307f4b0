// The graph IR: a DAG of CNN operators over NCHW float32 tensors.
//
// Ops are stored in a topological order and identified by dense ids (their index). Each op
// produces exactly one tensor; an op's inputs are ids of earlier ops or graph inputs (kGraphInput,
// the image; a model set with separate inputs has more, graph_input_id(k)). The graph's output
// is its last op unless set_outputs() names several (a detector backbone's FPN levels; a model
// set returns every output of every model, model after model). Shapes are inferred when an op is
// added, so a Graph is always shape-consistent; the batch size is a parameter of the graph (see
// with_batch()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace iostune {

constexpr int kGraphInput = -1;  // the id used in Op::inputs for the graph's (first) input
// Input k of a graph with several (k = 0 is kGraphInput): ids -1, -2, ...; never an op id.
constexpr int graph_input_id(int index) { return -1 - index; }
constexpr bool is_graph_input(int id) { return id < 0; }
constexpr int graph_input_index(int id) { return -1 - id; }

struct Shape {
    int n = 0, c = 0, h = 0, w = 0;
    int64_t elements() const { return int64_t(n) * c * h * w; }
    bool operator==(const Shape&) const = default;
};

enum class OpKind {
    Conv, SepConv, MaxPool, AvgPool, Concat, Add, Relu, Linear, Softmax, Identity,
    // The operators of deployed CNNs (MobileNet, EfficientNet, ShuffleNet, ConvNeXt, U-Net, FPN).
    Activation, Binary, ChannelAffine, ChannelShuffle, ChannelSlice, Resize, ConvTranspose,
    ChannelNorm, SpatialPad,
    // The second round (PReLU nets, GroupNorm heads, ResNeSt and SKNet split attention, YOLO's
    // Focus stem, PixelShuffle upsamplers, multi-scale classifier heads).
    PRelu, GroupNorm, RadixSoftmax, StridedSlice, DepthToSpace, SpaceToDepth, Flatten,
};
constexpr int kOpKindCount = int(OpKind::Flatten) + 1;

// A pointwise nonlinearity y = f(x) (torch semantics); alpha and beta are its parameters:
//   clip          min(max(x, alpha), beta)                 (ReLU6: alpha 0, beta 6)
//   sigmoid       1 / (1 + exp(-x))
//   silu          x * sigmoid(x)                             (Swish)
//   hardsigmoid   max(0, min(1, alpha * x + beta))           (torch: alpha 1/6, beta 1/2)
//   hardswish     x * max(0, min(1, x / 6 + 1/2))
//   leakyrelu     x >= 0 ? x : alpha * x
//   gelu          x / 2 * (1 + erf(x / sqrt(2)))             (the exact, erf form)
//   tanh          tanh(x)
// Functions that take no parameter keep alpha = beta = 0.
enum class ActivationFunction { Clip, Sigmoid, Silu, HardSigmoid, HardSwish, LeakyRelu, Gelu, Tanh };
constexpr int kActivationFunctionCount = int(ActivationFunction::Tanh) + 1;
struct ActivationAttrs {
    ActivationFunction function = ActivationFunction::Sigmoid;
    float alpha = 0.0f, beta = 0.0f;
    bool operator==(const ActivationAttrs&) const = default;
};

// Convolution with optional bias (batch norm folded in), an optional residual and a fused ReLU
// or other activation: act(conv(x) + bias + z). With `residual` the op has a second input z (a
// residual add fused into the convolution by src/fusion.h) of the output's shape. `relu`,
// `activation` (an Activation op fused by src/fusion.h) and `prelu` (a PRelu op fused by it: one
// more parameter, its slopes [out_channels]) exclude each other.
struct ConvAttrs {
    int out_channels = 0;
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, stride_w = 1;
    int pad_h = 0, pad_w = 0;
    int dilation_h = 1, dilation_w = 1;
    int groups = 1;
    bool bias = true;
    bool relu = false;
    bool residual = false;
    std::optional<ActivationAttrs> activation = std::nullopt;
    bool prelu = false;
    bool operator==(const ConvAttrs&) const = default;
};

// The "Relu-SepConv" unit of NASNet / RandWire: [ReLU] -> depthwise kxk -> pointwise 1x1 (+bias
// from the folded batch norm) [-> ReLU]. The depthwise part has no bias. The ReLU after is the
// fusion pass's: it moves there when every reader of the output applies one (fusion.h).
struct SepConvAttrs {
    int out_channels = 0;
    int kernel = 3;
    int stride = 1;
    int pad = 1;
    int dilation = 1;
    bool pre_relu = true;
    bool bias = true;
    bool post_relu = false;
    bool operator==(const SepConvAttrs&) const = default;
};

// Max or average pooling. `global` pools the whole spatial extent (kernel/stride/pad ignored).
// ceil_mode and count_include_pad follow torch.nn.{Max,Avg}Pool2d exactly.
struct PoolAttrs {
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, stride_w = 1;
    int pad_h = 0, pad_w = 0;
    bool ceil_mode = false;
    bool count_include_pad = true;  // AvgPool only
    bool global = false;
    bool operator==(const PoolAttrs&) const = default;
};

struct ConcatAttrs {  // along channels
    bool operator==(const ConcatAttrs&) const = default;
};
struct AddAttrs {  // elementwise sum of two or more equal-shaped inputs
    bool relu = false;
    bool operator==(const AddAttrs&) const = default;
};
struct ReluAttrs {
    bool operator==(const ReluAttrs&) const = default;
};
// Fully connected layer over the flattened C*H*W input; output shape N x out x 1 x 1.
struct LinearAttrs {
    int out_features = 0;
    bool bias = true;
    bool operator==(const LinearAttrs&) const = default;
};
struct SoftmaxAttrs {  // over channels
    bool operator==(const SoftmaxAttrs&) const = default;
};
struct IdentityAttrs {
    bool operator==(const IdentityAttrs&) const = default;
};

// Elementwise a (op) b of two tensors with broadcasting: the batch sizes agree, and each of
// C, H, W is equal or 1 in either input (a squeeze-excitation scale [N, C, 1, 1] times a map).
// Constant operands are ChannelAffine ops instead.
enum class BinaryOp { Add, Sub, Mul, Div };
constexpr int kBinaryOpCount = int(BinaryOp::Div) + 1;
struct BinaryAttrs {
    BinaryOp op = BinaryOp::Mul;
    bool operator==(const BinaryAttrs&) const = default;
};

// y[n, c] = scale[c] * x[n, c] + shift[c]: a batch norm that did not fold into a convolution,
// and any elementwise arithmetic with a per-channel or scalar constant (input normalisation,
// ConvNeXt's layer scale). Parameters scale [C], shift [C].
struct ChannelAffineAttrs {
    bool operator==(const ChannelAffineAttrs&) const = default;
};

// ShuffleNet's channel shuffle: view as [N, groups, C/groups, H, W], swap the two channel axes,
// view as [N, C, H, W]. Output channel j = k * groups + g reads input channel g * (C/groups) + k.
struct ChannelShuffleAttrs {
    int groups = 1;
    bool operator==(const ChannelShuffleAttrs&) const = default;
};

// Channels [begin, end) of the input (Split and Slice along channels).
struct ChannelSliceAttrs {
    int begin = 0, end = 0;
    bool operator==(const ChannelSliceAttrs&) const = default;
};

// Spatial resize to out_h x out_w, as torch.nn.functional.interpolate:
//   nearest:   source index floor(dst * in / out)   (torch's "nearest", ONNX asymmetric/floor)
//   bilinear:  align_corners = false: source (dst + 0.5) * in / out - 0.5, clamped at 0
//              (ONNX half_pixel / pytorch_half_pixel); true: dst * (in - 1) / (out - 1).
// The ratios in/out are the ones torch uses whenever out is an integer multiple of in (or of a
// scale factor whose product is exact), which is how U-Nets and FPNs resize.
enum class ResizeMode { Nearest, Bilinear };
constexpr int kResizeModeCount = int(ResizeMode::Bilinear) + 1;
struct ResizeAttrs {
    ResizeMode mode = ResizeMode::Nearest;
    int out_h = 1, out_w = 1;
    bool align_corners = false;  // bilinear only
    bool operator==(const ResizeAttrs&) const = default;
};

// torch.nn.ConvTranspose2d: output size (in - 1) * stride - 2 * pad + dilation * (kernel - 1)
// + output_padding + 1. Weight [Cin, Cout/groups, kh, kw], optional bias [Cout].
struct ConvTransposeAttrs {
    int out_channels = 0;
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, stride_w = 1;
    int pad_h = 0, pad_w = 0;
    int output_padding_h = 0, output_padding_w = 0;
    int dilation_h = 1, dilation_w = 1;
    int groups = 1;
    bool bias = true;
    bool operator==(const ConvTransposeAttrs&) const = default;
};

// Layer normalisation over the channels of each pixel (ConvNeXt's channels-last LayerNorm):
// y = (x - mean_c) / sqrt(var_c + eps) * gamma[c] + beta[c], with the biased variance.
// Parameters gamma [C], beta [C].
struct ChannelNormAttrs {
    float eps = 1e-6f;
    bool operator==(const ChannelNormAttrs&) const = default;
};

// Zero padding and cropping of the spatial axes (ONNX Pad with zeros, PyTorch's ZeroPad2d and
// F.pad, a Slice of H or W): `top` rows are added above the map (removed when negative), `bottom`
// below, `left` and `right` columns likewise. Output H = h + top + bottom, W = w + left + right;
// out[n, c, y, x] = in[n, c, y - top, x - left], or 0 where that lies outside the input.
// NASNet's ZeroPad2d((-1, 1, -1, 1)) is top = left = -1, bottom = right = 1: a shift by a pixel.
struct SpatialPadAttrs {
    int top = 0, bottom = 0, left = 0, right = 0;
    bool operator==(const SpatialPadAttrs&) const = default;
};

// PReLU (torch.nn.PReLU with one slope per channel): y = x >= 0 ? x : slope[c] * x. Parameter
// slope [C]. (A single slope shared by all channels is a leakyrelu activation.)
struct PReluAttrs {
    bool operator==(const PReluAttrs&) const = default;
};

// Group normalisation (torch.nn.GroupNorm; InstanceNorm is groups = C): the channels split into
// `groups` runs of C / groups consecutive channels; each image's group is normalised over its
// channels and pixels with its mean and biased variance, then scaled and shifted per channel:
// y = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c]. Parameters gamma [C], beta [C].
struct GroupNormAttrs {
    int groups = 1;
    float eps = 1e-5f;
    bool operator==(const GroupNormAttrs&) const = default;
};

// The softmax across the `radix` branches of split attention, per pixel (ResNeSt's rSoftMax,
// SKNet's softmax over paths). The input's channels are [cardinality, radix, r], the output's
// [radix, cardinality, r] (r = C / (cardinality * radix)), as ResNeSt's view + transpose has them:
//   out[(k * cardinality + g) * r + j] = softmax over k of in[(g * radix + k) * r + j].
// With cardinality 1 both are [radix, r]: SKNet's view [N, radix, C / radix, H, W] + softmax(1).
struct RadixSoftmaxAttrs {
    int radix = 2;
    int cardinality = 1;
    bool operator==(const RadixSoftmaxAttrs&) const = default;
};

// Every step-th channel, row and column from a start, `count` of each (Python's x[:, :, ::2, ::2],
// YOLO's Focus stem; a negative step walks backwards):
//   out[n, c, y, x] = in[n, c_begin + c * c_step, h_begin + y * h_step, w_begin + x * w_step].
// Output C, H, W = c_count, h_count, w_count; every index read must lie inside the input.
struct StridedSliceAttrs {
    int c_begin = 0, c_step = 1, c_count = 1;
    int h_begin = 0, h_step = 1, h_count = 1;
    int w_begin = 0, w_step = 1, w_count = 1;
    bool operator==(const StridedSliceAttrs&) const = default;
};

// Where a block's pixels sit among the channels of depth_to_space / space_to_depth (ONNX's
// modes): DCR (depth, column, row) puts the block offset (by, bx) outermost, channel
// (by * block + bx) * C + c; CRD (torch's PixelShuffle / PixelUnshuffle) innermost,
// c * block * block + by * block + bx.
enum class BlockOrder { Dcr, Crd };
constexpr int kBlockOrderCount = int(BlockOrder::Crd) + 1;

// depth_to_space moves each pixel's block * block channel groups into a block x block patch:
// [N, C, H, W] -> [N, C / block^2, H * block, W * block], out[n, c, y * block + by, x * block + bx]
// = in[n, source channel of (c, by, bx) in `order`, y, x]. space_to_depth is its inverse:
// [N, C, H, W] -> [N, C * block^2, H / block, W / block].
struct DepthSpaceAttrs {
    int block = 2;
    BlockOrder order = BlockOrder::Dcr;
    bool operator==(const DepthSpaceAttrs&) const = default;
};

// An NCHW map as a vector (torch.flatten(x, 1) before a concat of several such vectors):
// [N, C, H, W] -> [N, C * H * W, 1, 1], out[n, (c * H + y) * W + x] = in[n, c, y, x].
struct FlattenAttrs {
    bool operator==(const FlattenAttrs&) const = default;
};

using OpAttrs = std::variant<ConvAttrs, SepConvAttrs, PoolAttrs, ConcatAttrs, AddAttrs, ReluAttrs,
                             LinearAttrs, SoftmaxAttrs, IdentityAttrs, ActivationAttrs,
                             BinaryAttrs, ChannelAffineAttrs, ChannelShuffleAttrs,
                             ChannelSliceAttrs, ResizeAttrs, ConvTransposeAttrs,
                             ChannelNormAttrs, SpatialPadAttrs, PReluAttrs, GroupNormAttrs,
                             RadixSoftmaxAttrs, StridedSliceAttrs, DepthSpaceAttrs, FlattenAttrs>;

struct Op {
    int id = 0;
    std::string name;
    OpKind kind = OpKind::Identity;
    OpAttrs attrs;
    std::vector<int> inputs;  // producer op ids, or kGraphInput
    Shape output;             // inferred
    int cell = -1;  // natural cell of the model (NASNet); -1 = none. Used to cut blocks.

    template <class T>
    const T& as() const { return std::get<T>(attrs); }
};

// A parameter tensor of an op (weights or bias), row-major in the layout param_shapes() gives.
struct ParamTensor {
    std::vector<int> dims;
    std::vector<float> values;
};

enum class WeightsState { Absent, SeededRandom, Loaded };

// One model of a model set combined into one graph (model_set.h). Its ops are the contiguous
// id range [first_op, end_op) in its own order; they read `input` and no other member's ops.
struct GraphMember {
    std::string name;         // the model's own name
    std::string fingerprint;  // the model's own structural fingerprint
    int first_op = 0, end_op = 0;
    int input = kGraphInput;  // the graph input it reads
    std::vector<int> outputs;  // its output ops, in its own order (most models have one)
    bool operator==(const GraphMember&) const = default;
};

class Graph {
public:
    Graph() = default;
    Graph(std::string name, Shape input);

    const std::string& name() const { return name_; }
    void set_name(std::string name) { name_ = std::move(name); }
    const Shape& input_shape() const { return inputs_.front(); }
    int input_count() const { return int(inputs_.size()); }
    const Shape& input_shape(int index) const { return inputs_.at(size_t(index)); }
    // Adds another input (same batch as the first) and returns its id, graph_input_id(k).
    int add_input(Shape shape);
    int batch() const { return inputs_.front().n; }
    const std::vector<Op>& ops() const { return ops_; }
    const Op& op(int id) const { return ops_.at(size_t(id)); }
    int size() const { return int(ops_.size()); }
    // The output ops: the last op, unless set_outputs() named others.
    std::vector<int> outputs() const;
    int output_count() const { return int(outputs().size()); }
    int output_id() const { return outputs().front(); }  // the first output
    const Shape& output_shape() const;                   // of the first output
    // Names the output ops (each at most once); throws iostune::Error on a bad id.
    void set_outputs(std::vector<int> outputs);
    // Shape of the tensor an op input id refers to (a graph input or an op id).
    const Shape& tensor_shape(int id) const;

    // The models this graph combines (model_set.h); empty for a single model.
    const std::vector<GraphMember>& members() const { return members_; }
    void set_members(std::vector<GraphMember> members);
    // The member an op belongs to (its index), or -1 for a single model.
    int member_of(int op_id) const;

    // Appends an op, infers its shape and returns its id. Throws iostune::Error (naming the op)
    // on a dangling input, a forward reference (which would make a cycle), a shape mismatch or
    // invalid attributes.
    int add(OpKind kind, OpAttrs attrs, std::vector<int> inputs, std::string name, int cell = -1);

    // Consumers of each op (ids, ascending).
    std::vector<std::vector<int>> consumers() const;

    // The same graph re-inferred for another batch size (weights are kept).
    Graph with_batch(int batch) const;

    // Parameters, one entry per op (empty for ops without parameters, or when Absent).
    WeightsState weights_state() const { return weights_state_; }
    const std::vector<std::vector<ParamTensor>>& params() const { return params_; }
    const std::vector<ParamTensor>& params_of(int id) const { return params_.at(size_t(id)); }
    // Replaces all parameters; checks every tensor against param_shapes().
    void set_params(std::vector<std::vector<ParamTensor>> params, WeightsState state);
    void drop_params();

private:
    std::string name_;
    std::vector<Shape> inputs_;
    std::vector<Op> ops_;
    std::vector<int> outputs_;  // empty: the last op
    std::vector<GraphMember> members_;
    WeightsState weights_state_ = WeightsState::Absent;
    std::vector<std::vector<ParamTensor>> params_;
};

const char* to_string(OpKind kind);
std::optional<OpKind> op_kind_from_string(const std::string& name);
// Names of the attribute enums as the JSON model format writes them ("?" for none).
const char* to_string(ActivationFunction function);
const char* to_string(BinaryOp op);
const char* to_string(ResizeMode mode);
const char* to_string(BlockOrder order);
// "silu(0,0)": the function with its alpha and beta, as convolution signatures and cache keys
// name a fused activation.
std::string to_string(const ActivationAttrs& a);

// Output shape of an op given its input shapes; throws iostune::Error on a mismatch ("shape
// mismatch: ...") or on attributes no input could make valid ("invalid attributes: ...").
Shape infer_shape(OpKind kind, const OpAttrs& attrs, const std::vector<Shape>& inputs,
                  const std::string& op_name);

}  // namespace iostune
