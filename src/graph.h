// The graph IR: a DAG of CNN operators over NCHW float32 tensors.
//
// Ops are stored in a topological order and identified by dense ids (their index). Each op
// produces exactly one tensor; an op's inputs are ids of earlier ops or kGraphInput (the image).
// The graph's output is its last op. Shapes are inferred when an op is added, so a Graph is
// always shape-consistent; the batch size is a parameter of the graph (see with_batch()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace iostune {

constexpr int kGraphInput = -1;  // the id used in Op::inputs for the graph's input tensor

struct Shape {
    int n = 0, c = 0, h = 0, w = 0;
    int64_t elements() const { return int64_t(n) * c * h * w; }
    bool operator==(const Shape&) const = default;
};

enum class OpKind { Conv, SepConv, MaxPool, AvgPool, Concat, Add, Relu, Linear, Softmax, Identity };

// Convolution with optional bias (batch norm folded in) and fused ReLU.
struct ConvAttrs {
    int out_channels = 0;
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, stride_w = 1;
    int pad_h = 0, pad_w = 0;
    int dilation_h = 1, dilation_w = 1;
    int groups = 1;
    bool bias = true;
    bool relu = false;
    bool operator==(const ConvAttrs&) const = default;
};

// The "Relu-SepConv" unit of NASNet / RandWire: [ReLU] -> depthwise kxk -> pointwise 1x1 (+bias
// from the folded batch norm). The depthwise part has no bias.
struct SepConvAttrs {
    int out_channels = 0;
    int kernel = 3;
    int stride = 1;
    int pad = 1;
    int dilation = 1;
    bool pre_relu = true;
    bool bias = true;
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

using OpAttrs = std::variant<ConvAttrs, SepConvAttrs, PoolAttrs, ConcatAttrs, AddAttrs, ReluAttrs,
                             LinearAttrs, SoftmaxAttrs, IdentityAttrs>;

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

class Graph {
public:
    Graph() = default;
    Graph(std::string name, Shape input);

    const std::string& name() const { return name_; }
    void set_name(std::string name) { name_ = std::move(name); }
    const Shape& input_shape() const { return input_; }
    int batch() const { return input_.n; }
    const std::vector<Op>& ops() const { return ops_; }
    const Op& op(int id) const { return ops_.at(size_t(id)); }
    int size() const { return int(ops_.size()); }
    int output_id() const { return size() - 1; }
    const Shape& output_shape() const;
    // Shape of the tensor an op input id refers to (kGraphInput or an op id).
    const Shape& tensor_shape(int id) const;

    // Appends an op, infers its shape and returns its id. Throws iostune::Error (naming the op)
    // on a dangling input, a forward reference (which would make a cycle) or a shape mismatch.
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
    Shape input_;
    std::vector<Op> ops_;
    WeightsState weights_state_ = WeightsState::Absent;
    std::vector<std::vector<ParamTensor>> params_;
};

const char* to_string(OpKind kind);
std::optional<OpKind> op_kind_from_string(const std::string& name);

// Output shape of an op given its input shapes; throws iostune::Error on a mismatch.
Shape infer_shape(OpKind kind, const OpAttrs& attrs, const std::vector<Shape>& inputs,
                  const std::string& op_name);

}  // namespace iostune
