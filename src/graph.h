// The graph IR: a DAG of CNN operators over NCHW float32 tensors.
//
// Ops are stored in a topological order and identified by dense ids (their index). Each op
// produces exactly one tensor; an op's inputs are ids of earlier ops or graph inputs (kGraphInput,
// the image; a model set with separate inputs has more, graph_input_id(k)). The graph's output
// is its last op unless set_outputs() names several (a model set returns one per model). Shapes
// are inferred when an op is added, so a Graph is always shape-consistent; the batch size is a
// parameter of the graph (see with_batch()).
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

enum class OpKind { Conv, SepConv, MaxPool, AvgPool, Concat, Add, Relu, Linear, Softmax, Identity };

// Convolution with optional bias (batch norm folded in), an optional residual and fused ReLU:
// relu?(conv(x) + bias + z). With `residual` the op has a second input z (a residual add fused
// into the convolution by src/fusion.h) of the output's shape.
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

// One model of a model set combined into one graph (model_set.h). Its ops are the contiguous
// id range [first_op, end_op) in its own order; they read `input` and no other member's ops.
struct GraphMember {
    std::string name;         // the model's own name
    std::string fingerprint;  // the model's own structural fingerprint
    int first_op = 0, end_op = 0;
    int input = kGraphInput;  // the graph input it reads
    int output = 0;           // its output op
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
    std::vector<Shape> inputs_;
    std::vector<Op> ops_;
    std::vector<int> outputs_;  // empty: the last op
    std::vector<GraphMember> members_;
    WeightsState weights_state_ = WeightsState::Absent;
    std::vector<std::vector<ParamTensor>> params_;
};

const char* to_string(OpKind kind);
std::optional<OpKind> op_kind_from_string(const std::string& name);

// Output shape of an op given its input shapes; throws iostune::Error on a mismatch.
Shape infer_shape(OpKind kind, const OpAttrs& attrs, const std::vector<Shape>& inputs,
                  const std::string& op_name);

}  // namespace iostune
