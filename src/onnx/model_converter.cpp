#include "src/onnx/model_converter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/onnx/draft_graph.h"
#include "src/onnx/node_attributes.h"
#include "src/onnx/onnx_tensor.h"

namespace iostune::onnx_import {

namespace {

constexpr const char* kSupportedOps =
    "Conv, BatchNormalization, Relu, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, "
    "Pad, Concat, Add, Sum, Gemm, MatMul, Flatten, Reshape, Softmax, Dropout, Identity, Constant";

// What an ONNX tensor name stands for during conversion.
struct Value {
    enum class Form {
        Tensor,    // the NCHW output of a draft op (or the graph input)
        Flat,      // the same tensor viewed as [N, C*H*W] (after Flatten/Reshape)
        Padded,    // a tensor zero-padded by a Pad node, waiting for the Conv/AveragePool it feeds
        Constant,  // an initializer or Constant output
    };
    Form form = Form::Tensor;
    int id = kGraphInput;
    std::array<int64_t, 4> pads{};  // Padded: begin_h, begin_w, end_h, end_w
    std::shared_ptr<const ConstTensor> constant;
};

// Window geometry of a Conv or pool along one spatial axis.
struct Axis {
    int64_t in = 0, kernel = 1, stride = 1, dilation = 1, begin = 0, end = 0;
};

int64_t window_count(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                     int64_t pad_sum) {
    return (in + pad_sum - dilation * (kernel - 1) - 1) / stride + 1;
}

class Converter {
public:
    Converter(const onnx::GraphProto& graph, int opset, std::string source, Shape input,
              const std::string& input_name)
        : graph_(graph), opset_(opset), source_(std::move(source)), draft_(input) {
        values_[input_name] = Value{};
        for (const auto& initializer : graph.initializer())
            values_[initializer.name()] = constant(decode_tensor(
                initializer, fmt::format("{}: initializer '{}'", source_, initializer.name())));
        for (const auto& node : graph.node())
            for (const auto& name : node.input()) ++uses_[name];
        for (const auto& output : graph.output()) ++uses_[output.name()];
    }

    Graph run(const std::string& name) {
        for (const auto& node : graph_.node()) convert(node);
        const std::string& output = graph_.output(0).name();
        auto it = values_.find(output);
        if (it == values_.end())
            throw Error(fmt::format("{}: the graph output '{}' is not produced by any node",
                                    source_, output));
        const Value& out = it->second;
        if (out.form != Value::Form::Tensor && out.form != Value::Form::Flat)
            throw Error(
                fmt::format("{}: the graph output '{}' is a constant or a padded tensor; "
                            "iostune needs it to be computed from the input",
                            source_, output));
        return draft_.finish(name, out.id);
    }

private:
    using Handler = void (Converter::*)(const onnx::NodeProto&);

    static Value constant(ConstTensor tensor) {
        Value v;
        v.form = Value::Form::Constant;
        v.constant = std::make_shared<const ConstTensor>(std::move(tensor));
        return v;
    }

    std::string where(const onnx::NodeProto& node) const {
        return fmt::format("{}: node '{}' ({}, opset {})", source_, node_name(node), node.op_type(),
                           opset_);
    }
    static std::string node_name(const onnx::NodeProto& node) {
        if (!node.name().empty()) return node.name();
        return node.output_size() > 0 ? node.output(0) : node.op_type();
    }
    Error fail(const onnx::NodeProto& node, const std::string& why) const {
        return Error(fmt::format("{}: {}", where(node), why));
    }

    void convert(const onnx::NodeProto& node) {
        static const std::map<std::string, Handler> handlers = {
            {"Conv", &Converter::conv},
            {"BatchNormalization", &Converter::batch_norm},
            {"Relu", &Converter::relu},
            {"MaxPool", &Converter::max_pool},
            {"AveragePool", &Converter::average_pool},
            {"GlobalAveragePool", &Converter::global_pool},
            {"GlobalMaxPool", &Converter::global_pool},
            {"Pad", &Converter::pad},
            {"Concat", &Converter::concat},
            {"Add", &Converter::add},
            {"Sum", &Converter::add},
            {"Gemm", &Converter::gemm},
            {"MatMul", &Converter::matmul},
            {"Flatten", &Converter::flatten},
            {"Reshape", &Converter::reshape},
            {"Softmax", &Converter::softmax},
            {"Dropout", &Converter::dropout},
            {"Identity", &Converter::identity},
            {"Constant", &Converter::constant_node},
        };
        const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
        auto it = handlers.find(node.op_type());
        if (!default_domain || it == handlers.end())
            throw Error(fmt::format(
                "{}: node '{}' has op type '{}'{} (opset {}), which iostune cannot import. "
                "Supported op types: {}",
                source_, node_name(node), node.op_type(),
                default_domain ? "" : fmt::format(" of domain '{}'", node.domain()), opset_,
                kSupportedOps));
        if (node.output_size() == 0 || node.output(0).empty())
            throw fail(node, "the node has no output");
        (this->*(it->second))(node);
    }

    // ---- inputs and outputs of a node ----

    bool has_input(const onnx::NodeProto& node, int index) const {
        return index < node.input_size() && !node.input(index).empty();
    }
    const Value& input(const onnx::NodeProto& node, int index) const {
        if (!has_input(node, index)) throw fail(node, fmt::format("input {} is missing", index));
        auto it = values_.find(node.input(index));
        if (it == values_.end())
            throw fail(node, fmt::format("input '{}' is not the graph input, an initializer or "
                                         "the output of an earlier node (ONNX requires nodes in "
                                         "topological order)",
                                         node.input(index)));
        return it->second;
    }
    const ConstTensor& constant_input(const onnx::NodeProto& node, int index,
                                      const char* what) const {
        const Value& v = input(node, index);
        if (v.form != Value::Form::Constant)
            throw fail(node, fmt::format("the {} (input '{}') must be an initializer or constant; "
                                         "iostune imports models with fixed weights",
                                         what, node.input(index)));
        return *v.constant;
    }
    const std::vector<float>& float_input(const onnx::NodeProto& node, int index, const char* what,
                                          size_t count) const {
        const ConstTensor& t = constant_input(node, index, what);
        if (!t.is_float || t.floats.size() != count)
            throw fail(node,
                       fmt::format("the {} ('{}') should hold {} float values, it holds {}", what,
                                   t.name, count, t.is_float ? t.floats.size() : t.ints.size()));
        return t.floats;
    }
    // A 4-D activation; Padded is accepted only where the caller folds the padding itself.
    const Value& activation(const onnx::NodeProto& node, int index,
                            bool allow_padded = false) const {
        const Value& v = input(node, index);
        if (v.form == Value::Form::Tensor || (allow_padded && v.form == Value::Form::Padded))
            return v;
        if (v.form == Value::Form::Padded)
            throw fail(node, fmt::format("input '{}' comes from a Pad node; iostune folds Pad only "
                                         "into a following Conv or AveragePool",
                                         node.input(index)));
        if (v.form == Value::Form::Flat)
            throw fail(node, fmt::format("input '{}' is a flattened (2-D) tensor; this op needs an "
                                         "NCHW tensor",
                                         node.input(index)));
        throw fail(node, fmt::format("input '{}' is a constant; this op needs a tensor computed "
                                     "from the model input",
                                     node.input(index)));
    }
    void define(const onnx::NodeProto& node, int index, Value v) {
        values_[node.output(index)] = std::move(v);
    }
    void define_op(const onnx::NodeProto& node, int id, Value::Form form = Value::Form::Tensor) {
        Value v;
        v.form = form;
        v.id = id;
        define(node, 0, v);
    }
    // Optional outputs (MaxPool indices, Dropout mask, BN training statistics) must be unused.
    void require_unused_outputs(const onnx::NodeProto& node, int first) const {
        for (int i = first; i < node.output_size(); ++i) {
            const std::string& name = node.output(i);
            if (!name.empty() && uses_.count(name))
                throw fail(node, fmt::format("output {} ('{}') is used, and iostune computes only "
                                             "this op's main output",
                                             i, name));
        }
    }
    int uses(const std::string& name) const {
        auto it = uses_.find(name);
        return it == uses_.end() ? 0 : it->second;
    }
    std::string op_name(const onnx::NodeProto& node) const { return node_name(node); }

    // ---- window geometry (Conv, pools) ----

    // Reads kernel/stride/dilation/pads/auto_pad; `extra` is padding from a preceding Pad node.
    std::array<Axis, 2> window(const onnx::NodeProto& node, const NodeAttributes& attrs,
                               const Shape& in, std::array<int64_t, 2> kernel,
                               const std::array<int64_t, 4>& extra) const {
        const auto strides = attrs.get_ints("strides", {1, 1});
        const auto dilations = attrs.get_ints("dilations", {1, 1});
        auto pads = attrs.get_ints("pads", {0, 0, 0, 0});
        if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
            throw fail(node, "only 2-D windows (NCHW inputs) are supported");
        std::array<Axis, 2> axes;
        const std::array<int64_t, 2> size{in.h, in.w};
        for (int a = 0; a < 2; ++a) {
            axes[a] = {size[a], kernel[a], strides[a], dilations[a], pads[a], pads[a + 2]};
            if (axes[a].kernel <= 0 || axes[a].stride <= 0 || axes[a].dilation <= 0 ||
                axes[a].begin < 0 || axes[a].end < 0)
                throw fail(node, "kernel, strides and dilations must be positive, pads >= 0");
        }
        const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
        if (auto_pad == "VALID") {
            for (Axis& axis : axes) axis.begin = axis.end = 0;
        } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            for (Axis& axis : axes) {
                const int64_t out = (axis.in + axis.stride - 1) / axis.stride;
                const int64_t total = std::max<int64_t>(
                    0, (out - 1) * axis.stride + axis.dilation * (axis.kernel - 1) + 1 - axis.in);
                axis.begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
                axis.end = total - axis.begin;
            }
        } else if (auto_pad != "NOTSET") {
            throw fail(node, fmt::format("auto_pad '{}' is not a valid value", auto_pad));
        }
        for (int a = 0; a < 2; ++a) {
            axes[a].begin += extra[a];
            axes[a].end += extra[a + 2];
        }
        return axes;
    }

    // iostune pads both sides of an axis equally. Asymmetric ONNX padding is accepted when it
    // yields the same windows: same output size with `begin` on both sides (the extra padding at
    // the end is then never read).
    int symmetric_pad(const onnx::NodeProto& node, const Axis& axis, const char* axis_name,
                      bool ceil_mode) const {
        if (axis.begin == axis.end) return int(axis.begin);
        const bool same_windows =
            !ceil_mode &&
            window_count(axis.in, axis.kernel, axis.stride, axis.dilation, axis.begin + axis.end) ==
                window_count(axis.in, axis.kernel, axis.stride, axis.dilation, 2 * axis.begin);
        if (!same_windows)
            throw fail(node, fmt::format("asymmetric padding along {} (begin {}, end {}) cannot be "
                                         "expressed with iostune's symmetric padding; re-export "
                                         "the model with equal padding on both sides",
                                         axis_name, axis.begin, axis.end));
        return int(axis.begin);
    }

    // ---- handlers ----

    void conv(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = activation(node, 0, true);
        const Shape in = draft_.shape(x.id);
        const ConstTensor& w = constant_input(node, 1, "weight");
        if (w.dims.size() != 4 || !w.is_float)
            throw fail(node,
                       "only 2-D convolutions with float weights [M, C/group, kH, kW] are "
                       "supported");
        const int64_t group = attrs.get_int("group", 1);
        if (group <= 0 || w.dims[1] * group != in.c || w.dims[0] % group != 0)
            throw fail(node, fmt::format("weight shape [{}] and group {} do not fit an input with "
                                         "{} channels",
                                         fmt::join(w.dims, ", "), group, in.c));
        const auto kernel = attrs.get_ints("kernel_shape", {w.dims[2], w.dims[3]});
        if (kernel != std::vector<int64_t>{w.dims[2], w.dims[3]})
            throw fail(node, fmt::format("kernel_shape [{}] disagrees with the weight shape [{}]",
                                         fmt::join(kernel, ", "), fmt::join(w.dims, ", ")));
        const auto axes = window(node, attrs, in, {w.dims[2], w.dims[3]}, x.pads);

        ConvAttrs a;
        a.out_channels = int(w.dims[0]);
        a.kernel_h = int(w.dims[2]);
        a.kernel_w = int(w.dims[3]);
        a.stride_h = int(axes[0].stride);
        a.stride_w = int(axes[1].stride);
        a.dilation_h = int(axes[0].dilation);
        a.dilation_w = int(axes[1].dilation);
        a.pad_h = symmetric_pad(node, axes[0], "H", false);
        a.pad_w = symmetric_pad(node, axes[1], "W", false);
        a.groups = int(group);
        a.bias = has_input(node, 2);
        std::vector<ParamTensor> params;
        params.push_back(
            {{int(w.dims[0]), int(w.dims[1]), int(w.dims[2]), int(w.dims[3])}, w.floats});
        if (a.bias)
            params.push_back(
                {{a.out_channels}, float_input(node, 2, "bias", size_t(a.out_channels))});
        define_op(node, draft_.add(OpKind::Conv, a, {x.id}, op_name(node), std::move(params)));
    }

    void batch_norm(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        if (attrs.get_int("training_mode", 0) != 0)
            throw fail(node, "training_mode=1 is not inference; export the model in eval mode");
        require_unused_outputs(node, 1);
        const Value& x = activation(node, 0);
        const int c = draft_.shape(x.id).c;
        const auto& gamma = float_input(node, 1, "scale", size_t(c));
        const auto& beta = float_input(node, 2, "bias", size_t(c));
        const auto& mean = float_input(node, 3, "running mean", size_t(c));
        const auto& var = float_input(node, 4, "running variance", size_t(c));
        const double epsilon = attrs.get_float("epsilon", 1e-5f);
        std::vector<float> scale(static_cast<size_t>(c));
        std::vector<float> shift(static_cast<size_t>(c));
        for (size_t i = 0; i < size_t(c); ++i) {
            const double s = double(gamma[i]) / std::sqrt(double(var[i]) + epsilon);
            scale[i] = float(s);
            shift[i] = float(double(beta[i]) - double(mean[i]) * s);
        }
        ConvAttrs a;
        a.out_channels = c;
        a.groups = c;
        std::vector<ParamTensor> params;
        params.push_back({{c, 1, 1, 1}, std::move(scale)});
        params.push_back({{c}, std::move(shift)});
        define_op(node, draft_.add(OpKind::Conv, a, {x.id}, op_name(node), std::move(params),
                                   /*batch_norm=*/true));
    }

    void unary(const onnx::NodeProto& node, OpKind kind, OpAttrs attrs) {
        const Value& x = input(node, 0);
        if (x.form != Value::Form::Flat) activation(node, 0);
        define_op(node, draft_.add(kind, std::move(attrs), {x.id}, op_name(node), {}), x.form);
    }

    void relu(const onnx::NodeProto& node) { unary(node, OpKind::Relu, ReluAttrs{}); }

    void pool(const onnx::NodeProto& node, OpKind kind) {
        const NodeAttributes attrs(node, where(node));
        require_unused_outputs(node, 1);
        const bool average = kind == OpKind::AvgPool;
        const Value& x = activation(node, 0, average);
        const bool padded = x.form == Value::Form::Padded;
        const auto kernel = attrs.get_ints("kernel_shape", {});
        if (kernel.size() != 2) throw fail(node, "kernel_shape must have 2 values (NCHW input)");
        if (attrs.get_ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1})
            throw fail(node, "dilated pooling is not supported");
        const bool ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
        bool count_include_pad = attrs.get_int("count_include_pad", 0) != 0;
        if (padded) {
            // Pad wrote real zeros, which the average counts: count_include_pad over the union.
            if (ceil_mode ||
                attrs.get_ints("pads", {0, 0, 0, 0}) != std::vector<int64_t>{0, 0, 0, 0})
                throw fail(node,
                           "an AveragePool after a Pad node must have no pads of its own and "
                           "ceil_mode=0");
            count_include_pad = true;
        }
        const auto axes = window(node, attrs, draft_.shape(x.id), {kernel[0], kernel[1]}, x.pads);
        PoolAttrs a;
        a.kernel_h = int(kernel[0]);
        a.kernel_w = int(kernel[1]);
        a.stride_h = int(axes[0].stride);
        a.stride_w = int(axes[1].stride);
        a.pad_h = symmetric_pad(node, axes[0], "H", ceil_mode);
        a.pad_w = symmetric_pad(node, axes[1], "W", ceil_mode);
        a.ceil_mode = ceil_mode;
        a.count_include_pad = count_include_pad;
        if (2 * a.pad_h > a.kernel_h || 2 * a.pad_w > a.kernel_w)
            throw fail(node, fmt::format("padding {}x{} is more than half the kernel {}x{}, which "
                                         "PyTorch (and iostune) does not allow",
                                         a.pad_h, a.pad_w, a.kernel_h, a.kernel_w));
        define_op(node, draft_.add(kind, a, {x.id}, op_name(node), {}));
    }
    void max_pool(const onnx::NodeProto& node) { pool(node, OpKind::MaxPool); }
    void average_pool(const onnx::NodeProto& node) { pool(node, OpKind::AvgPool); }

    void global_pool(const onnx::NodeProto& node) {
        const Value& x = activation(node, 0);
        PoolAttrs a;
        a.global = true;
        const OpKind kind = node.op_type() == "GlobalMaxPool" ? OpKind::MaxPool : OpKind::AvgPool;
        define_op(node, draft_.add(kind, a, {x.id}, op_name(node), {}));
    }

    void pad(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = activation(node, 0);
        if (attrs.get_string("mode", "constant") != "constant")
            throw fail(node, "only constant (zero) padding is supported");
        const ConstTensor& pads = constant_input(node, 1, "pads");
        if (pads.is_float || pads.ints.size() != 8)
            throw fail(node, "pads must be 8 integers (begin and end of N, C, H, W)");
        if (has_input(node, 2)) {
            const ConstTensor& value = constant_input(node, 2, "constant_value");
            const bool zero = value.is_float ? (value.floats.size() == 1 && value.floats[0] == 0.0f)
                                             : (value.ints.size() == 1 && value.ints[0] == 0);
            if (!zero) throw fail(node, "only padding with zeros is supported");
        }
        const auto& p = pads.ints;
        if (p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0)
            throw fail(node, "only spatial (H, W) padding is supported");
        for (int64_t v : p)
            if (v < 0) throw fail(node, "negative pads (cropping) are not supported");
        Value v;
        v.form = Value::Form::Padded;
        v.id = x.id;
        v.pads = {p[2], p[3], p[6], p[7]};
        define(node, 0, v);
    }

    void concat(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const int64_t axis = attrs.get_int("axis", 1);
        if (axis != 1 && axis != -3)
            throw fail(node, fmt::format("concatenation along axis {} is not supported (only "
                                         "channels, axis 1)",
                                         axis));
        std::vector<int> inputs;
        for (int i = 0; i < node.input_size(); ++i) inputs.push_back(activation(node, i).id);
        define_op(node, draft_.add(OpKind::Concat, ConcatAttrs{}, inputs, op_name(node), {}));
    }

    void add(const onnx::NodeProto& node) {
        if (node.input_size() == 2 && (input(node, 0).form == Value::Form::Constant ||
                                       input(node, 1).form == Value::Form::Constant)) {
            add_bias(node);
            return;
        }
        const Value& first = input(node, 0);
        std::vector<int> inputs;
        for (int i = 0; i < node.input_size(); ++i) {
            const Value& v = input(node, i);
            if (first.form == Value::Form::Flat && v.form == Value::Form::Flat)
                inputs.push_back(v.id);
            else
                inputs.push_back(activation(node, i).id);
            if (!(draft_.shape(v.id) == draft_.shape(first.id)))
                throw fail(node, "inputs of different shapes (broadcasting) are not supported");
        }
        if (inputs.size() < 2) throw fail(node, "needs at least two inputs");
        define_op(node, draft_.add(OpKind::Add, AddAttrs{}, inputs, op_name(node), {}), first.form);
    }

    // Tensor + constant: a bias per output channel of the Conv / Gemm / MatMul before it.
    void add_bias(const onnx::NodeProto& node) {
        const int tensor_index = input(node, 0).form == Value::Form::Constant ? 1 : 0;
        const Value& x = input(node, tensor_index);
        const ConstTensor& b = constant_input(node, 1 - tensor_index, "addend");
        const bool producer_ok =
            (x.form == Value::Form::Tensor || x.form == Value::Form::Flat) && x.id != kGraphInput &&
            (draft_.op(x.id).kind == OpKind::Linear || draft_.op(x.id).kind == OpKind::Conv) &&
            !draft_.op(x.id).batch_norm && uses(node.input(tensor_index)) == 1;
        if (!producer_ok)
            throw fail(node,
                       "adding a constant is supported only as the bias of the Conv, Gemm or "
                       "MatMul right before it");
        const int channels = draft_.shape(x.id).c;
        int64_t non_unit = 0;
        for (int64_t d : b.dims) non_unit += d != 1;
        const bool per_channel =
            b.is_float && b.elements() == channels && non_unit <= 1 &&
            (x.form == Value::Form::Flat
                 ? b.dims.size() <= 2 && (b.dims.empty() || b.dims.back() == channels)
                 : b.dims.size() >= 3 && b.dims[b.dims.size() - 3] == channels);
        if (!per_channel)
            throw fail(node, fmt::format("the constant of shape [{}] is not one value per output "
                                         "channel ({}) of '{}'",
                                         fmt::join(b.dims, ", "), channels, draft_.op(x.id).name));
        draft_.add_bias(x.id, b.floats);
        define(node, 0, x);
    }

    // Fully connected: `weight` is [out, K] already scaled.
    void linear(const onnx::NodeProto& node, const Value& x, std::vector<float> weight, int out,
                std::vector<float> bias) {
        LinearAttrs a;
        a.out_features = out;
        a.bias = !bias.empty();
        const Shape in = draft_.shape(x.id);
        std::vector<ParamTensor> params;
        params.push_back({{out, in.c * in.h * in.w}, std::move(weight)});
        if (a.bias) params.push_back({{out}, std::move(bias)});
        define_op(node, draft_.add(OpKind::Linear, a, {x.id}, op_name(node), std::move(params)),
                  Value::Form::Flat);
    }

    const Value& flat_input(const onnx::NodeProto& node) const {
        const Value& x = input(node, 0);
        if (x.form != Value::Form::Flat)
            throw fail(node, fmt::format("input '{}' must be a 2-D tensor [N, features] (Flatten "
                                         "or Reshape the NCHW tensor first)",
                                         node.input(0)));
        return x;
    }

    void gemm(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = flat_input(node);
        if (attrs.get_int("transA", 0) != 0) throw fail(node, "transA=1 is not supported");
        const bool trans_b = attrs.get_int("transB", 0) != 0;
        const float alpha = attrs.get_float("alpha", 1.0f);
        const float beta = attrs.get_float("beta", 1.0f);
        const ConstTensor& b = constant_input(node, 1, "weight B");
        const Shape in = draft_.shape(x.id);
        const int64_t k = int64_t(in.c) * in.h * in.w;
        if (b.dims.size() != 2 || !b.is_float || b.dims[trans_b ? 1 : 0] != k)
            throw fail(node, fmt::format("weight B of shape [{}] (transB={}) does not fit {} input "
                                         "features",
                                         fmt::join(b.dims, ", "), int(trans_b), k));
        const int out = int(b.dims[trans_b ? 0 : 1]);
        std::vector<float> weight(size_t(out) * size_t(k));
        for (int64_t o = 0; o < out; ++o)
            for (int64_t i = 0; i < k; ++i)
                weight[size_t(o * k + i)] =
                    alpha * b.floats[size_t(trans_b ? o * k + i : i * out + o)];
        std::vector<float> bias;
        if (has_input(node, 2)) {
            const ConstTensor& c = constant_input(node, 2, "bias C");
            if (!c.is_float || (c.elements() != out && c.elements() != 1) ||
                (c.dims.size() == 2 && c.dims[0] != 1))
                throw fail(node,
                           fmt::format("bias C of shape [{}] is not one value per output ({})",
                                       fmt::join(c.dims, ", "), out));
            bias.resize(size_t(out));
            for (size_t o = 0; o < size_t(out); ++o)
                bias[o] = beta * c.floats[c.floats.size() == 1 ? 0 : o];
        }
        linear(node, x, std::move(weight), out, std::move(bias));
    }

    void matmul(const onnx::NodeProto& node) {
        const Value& x = flat_input(node);
        const ConstTensor& b = constant_input(node, 1, "weight");
        const Shape in = draft_.shape(x.id);
        const int64_t k = int64_t(in.c) * in.h * in.w;
        if (b.dims.size() != 2 || !b.is_float || b.dims[0] != k)
            throw fail(node, fmt::format("weight of shape [{}] does not fit {} input features",
                                         fmt::join(b.dims, ", "), k));
        const int out = int(b.dims[1]);
        std::vector<float> weight(size_t(out) * size_t(k));
        for (int64_t o = 0; o < out; ++o)
            for (int64_t i = 0; i < k; ++i)
                weight[size_t(o * k + i)] = b.floats[size_t(i * out + o)];
        linear(node, x, std::move(weight), out, {});
    }

    void flatten(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = input(node, 0);
        const int64_t axis = attrs.get_int("axis", 1);
        if (x.form != Value::Form::Flat) activation(node, 0);
        const bool ok =
            x.form == Value::Form::Flat ? (axis == 1 || axis == -1) : (axis == 1 || axis == -3);
        if (!ok)
            throw fail(node, fmt::format("flattening at axis {} is not supported (only [N, rest], "
                                         "axis 1)",
                                         axis));
        define(node, 0, Value{Value::Form::Flat, x.id, {}, nullptr});
    }

    void reshape(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = input(node, 0);
        if (x.form != Value::Form::Flat) activation(node, 0);
        const ConstTensor& target = constant_input(node, 1, "shape");
        if (target.is_float) throw fail(node, "the shape must be integers");
        const Shape s = draft_.shape(x.id);
        const std::vector<int64_t> dims = x.form == Value::Form::Flat
                                              ? std::vector<int64_t>{s.n, int64_t(s.c) * s.h * s.w}
                                              : std::vector<int64_t>{s.n, s.c, s.h, s.w};
        const bool allow_zero = attrs.get_int("allowzero", 0) != 0;
        std::vector<int64_t> shape = target.ints;
        // The first axis is the batch; a fixed number there is the export's batch, ours to bind.
        if (!shape.empty() && shape[0] != -1) shape[0] = s.n;
        int64_t known = 1;
        int inferred = -1;
        for (size_t i = 0; i < shape.size(); ++i) {
            if (shape[i] == 0 && !allow_zero && i < dims.size()) shape[i] = dims[i];
            if (shape[i] == -1 && inferred < 0)
                inferred = int(i);
            else
                known *= shape[i];
        }
        const int64_t total = int64_t(s.n) * s.c * s.h * s.w;
        if (inferred >= 0 && known > 0 && total % known == 0)
            shape[size_t(inferred)] = total / known;
        const std::vector<int64_t> flat{s.n, int64_t(s.c) * s.h * s.w};
        const std::vector<int64_t> nchw{s.n, s.c, s.h, s.w};
        if (shape == flat) {
            define(node, 0, Value{Value::Form::Flat, x.id, {}, nullptr});
        } else if (shape == nchw && x.form == Value::Form::Tensor) {
            define(node, 0, x);
        } else {
            throw fail(node, fmt::format("reshaping [{}] to [{}] is not supported (only "
                                         "flattening to [N, C*H*W] before the classifier)",
                                         fmt::join(dims, ", "), fmt::join(target.ints, ", ")));
        }
    }

    void softmax(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = input(node, 0);
        const int64_t axis = attrs.get_int("axis", opset_ < 13 ? 1 : -1);
        const Shape s = draft_.shape(x.id);
        bool ok = false;
        if (x.form == Value::Form::Flat) {
            ok = (axis == 1 || axis == -1) && s.h == 1 && s.w == 1;
        } else {
            activation(node, 0);
            // Before opset 13, axis 1 meant "over C*H*W"; that is iostune's channel softmax only
            // for 1x1 maps.
            ok = (axis == 1 || axis == -3) && (opset_ >= 13 || (s.h == 1 && s.w == 1));
        }
        if (!ok)
            throw fail(node, fmt::format("softmax along axis {} of a {} tensor is not supported "
                                         "(only over the channels / features)",
                                         axis, x.form == Value::Form::Flat ? "2-D" : "4-D"));
        unary(node, OpKind::Softmax, SoftmaxAttrs{});
    }

    void dropout(const onnx::NodeProto& node) {
        require_unused_outputs(node, 1);
        if (has_input(node, 2)) {
            const ConstTensor& training = constant_input(node, 2, "training_mode");
            const bool on =
                training.is_float ? training.floats.at(0) != 0.0f : training.ints.at(0) != 0;
            if (on) throw fail(node, "training_mode is on; export the model in eval mode");
        }
        define(node, 0, input(node, 0));
    }

    void identity(const onnx::NodeProto& node) { define(node, 0, input(node, 0)); }

    void constant_node(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        ConstTensor t;
        if (auto value = attrs.get_tensor("value")) {
            t = std::move(*value);
        } else if (attrs.has("value_float")) {
            t.floats = {attrs.get_float("value_float", 0.0f)};
        } else if (attrs.has("value_floats")) {
            throw fail(node, "value_floats constants are not supported");
        } else if (attrs.has("value_int")) {
            t.is_float = false;
            t.ints = {attrs.get_int("value_int", 0)};
        } else if (attrs.has("value_ints")) {
            t.is_float = false;
            t.ints = attrs.get_ints("value_ints", {});
            t.dims = {int64_t(t.ints.size())};
        } else {
            throw fail(node, "a Constant without a tensor, float or int value is not supported");
        }
        t.name = node.output(0);
        define(node, 0, constant(std::move(t)));
    }

    const onnx::GraphProto& graph_;
    int opset_;
    std::string source_;
    DraftGraph draft_;
    std::unordered_map<std::string, Value> values_;
    std::unordered_map<std::string, int> uses_;
};

// The one graph input that is not an initializer, as an NCHW shape.
std::pair<std::string, Shape> graph_input(const onnx::GraphProto& graph, const std::string& source,
                                          int batch) {
    std::set<std::string> initializers;
    for (const auto& t : graph.initializer()) initializers.insert(t.name());
    std::vector<const onnx::ValueInfoProto*> inputs;
    for (const auto& in : graph.input())
        if (!initializers.count(in.name())) inputs.push_back(&in);
    if (inputs.size() != 1)
        throw Error(
            fmt::format("{}: the graph has {} inputs besides its initializers; iostune "
                        "imports models with exactly one input image",
                        source, inputs.size()));
    const onnx::ValueInfoProto& in = *inputs[0];
    if (!in.type().has_tensor_type() ||
        in.type().tensor_type().elem_type() != onnx::TensorProto::FLOAT)
        throw Error(fmt::format("{}: input '{}' must be a float32 tensor", source, in.name()));
    const auto& dims = in.type().tensor_type().shape().dim();
    if (dims.size() != 4)
        throw Error(
            fmt::format("{}: input '{}' has rank {}; iostune needs an NCHW image tensor "
                        "(rank 4)",
                        source, in.name(), dims.size()));
    static constexpr const char* kAxisNames[] = {"batch", "channel", "height", "width"};
    std::array<int, 4> size{};
    for (int axis = 0; axis < 4; ++axis) {
        const auto& d = dims[axis];
        if (d.has_dim_value() && d.dim_value() > 0) {
            size[size_t(axis)] = int(d.dim_value());
        } else if (axis == 0) {
            size[0] = batch;  // symbolic batch: bound by the caller
        } else {
            throw Error(fmt::format(
                "{}: input '{}' has a dynamic {} dimension{}; iostune needs fixed channel and "
                "spatial sizes (only the batch may be symbolic). Re-export the model with a "
                "fixed image size (no dynamic_axes on H/W)",
                source, in.name(), kAxisNames[axis],
                d.has_dim_param() ? fmt::format(" ('{}')", d.dim_param()) : std::string()));
        }
    }
    return {in.name(), Shape{size[0], size[1], size[2], size[3]}};
}

}  // namespace

Graph convert_model(const onnx::ModelProto& model, int opset, const std::string& source,
                    const OnnxImportOptions& options) {
    const onnx::GraphProto& graph = model.graph();
    if (graph.output_size() != 1)
        throw Error(fmt::format("{}: the graph has {} outputs; iostune imports models with one",
                                source, graph.output_size()));
    auto [input_name, input_shape] = graph_input(graph, source, options.batch);
    Converter converter(graph, opset, source, input_shape, input_name);
    return converter.run(options.name);
}

}  // namespace iostune::onnx_import
