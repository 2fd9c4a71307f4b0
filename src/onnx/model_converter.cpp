#include "src/onnx/model_converter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/onnx/constant_folding.h"
#include "src/onnx/draft_graph.h"
#include "src/onnx/node_attributes.h"
#include "src/onnx/node_schema.h"
#include "src/onnx/onnx_tensor.h"
#include "src/onnx/value_views.h"
#include "src/quoted.h"
#include "src/shape_limits.h"

namespace iostune::onnx_import {

namespace {

constexpr const char* kSupportedOps =
    "Conv, ConvTranspose, BatchNormalization, LayerNormalization (over channels), Relu, Clip, "
    "Sigmoid, HardSigmoid, HardSwish, LeakyRelu, Tanh, Gelu, Erf (in GELU's erf form), MaxPool, "
    "AveragePool, GlobalAveragePool, GlobalMaxPool, ReduceMean, ReduceMax and ReduceSum (over H "
    "and W; ReduceSum and ReduceMean also over split attention's branches), Pad "
    "(zeros, any pads: negative ones crop), Concat (channels; flattened vectors), Split (along "
    "channels), Slice (along channels, H and W, any step), Add, Sub, Mul, Div (tensors with "
    "broadcasting, or a per-channel or scalar constant), Sum, Gemm, MatMul, Flatten, Reshape, "
    "Squeeze and Unsqueeze (flattening, channel shuffle, split attention, GroupNorm, "
    "PixelShuffle), Transpose (channels-last blocks, channel shuffle, split attention, "
    "PixelShuffle), Resize (nearest, bilinear), Softmax (also across split attention's "
    "branches), PRelu, InstanceNormalization (also GroupNorm as PyTorch exports it), "
    "DepthToSpace, SpaceToDepth, Dropout, Identity, Constant, and any subgraph of constants or "
    "static shapes (Shape, "
    "Gather, Unsqueeze, Squeeze, Concat, Cast, Ceil, Floor, arithmetic, Max, Min, Clip, Mod, "
    "comparisons, Range, ConstantOfShape, Slice, Reshape, Transpose, Expand, Where, ...), which is "
    "folded at import";

// What an ONNX tensor name stands for during conversion.
struct Value {
    enum class Form {
        Tensor,    // the NCHW output of a draft op (or the graph input)
        Flat,      // the same tensor viewed as [N, C*H*W] (after Flatten/Reshape)
        Padded,    // a tensor padded (or cropped) by Pad or Slice nodes: a Conv or pool after it
                   // folds the padding into its own, any other reader gets a spatial_pad op
        Constant,  // an initializer or Constant output
        ChannelsLast,  // the tensor transposed to [N, H, W, C] (ConvNeXt's blocks)
        Grouped,   // the tensor viewed as [N, groups, C/groups, H, W] (channel shuffle, step 1)
        Shuffled,  // that view with its two channel axes swapped (channel shuffle, step 2)
        GeluErf,         // erf(x / sqrt(2)) of the tensor (GELU's erf form, step 1)
        GeluErfPlusOne,  // 1 + erf(x / sqrt(2))                            (step 2)
        GeluDouble,      // x * (1 + erf(x / sqrt(2))), twice GELU           (step 3)
        View,  // the tensor reshaped and perhaps transposed (value_views.h): split attention's
               // [N, cardinality, radix, r], GroupNorm's [N, G, -1], PixelShuffle's 6-D view
    };
    Form form = Form::Tensor;
    int id = kGraphInput;
    std::array<int64_t, 4> pads{};  // Padded: begin_h, begin_w, end_h, end_w; negative crops
    bool pad_lowest = false;        // Padded with -inf (timm's MaxPool2dSame), for a MaxPool only
    std::string pad_node;           // Padded: the last Pad or Slice node, which names its op
    int groups = 0;                 // Grouped, Shuffled
    Form pre_form = Form::Tensor;   // GELU steps: the form of x, whose op `id` is
    std::shared_ptr<const ConstTensor> constant;
    ViewShape view;  // View
};

bool is_gelu_step(Value::Form form) {
    return form == Value::Form::GeluErf || form == Value::Form::GeluErfPlusOne ||
           form == Value::Form::GeluDouble;
}

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
                initializer,
                fmt::format("{}: initializer {}", source_, quoted_name(initializer.name()))));
        for (const auto& node : graph.node())
            for (const auto& name : node.input()) ++uses_[name];
        for (const auto& output : graph.output()) ++uses_[output.name()];
    }

    Graph run(const std::string& name) {
        for (const auto& node : graph_.node()) convert(node);
        std::vector<int> outputs;
        for (const auto& graph_output : graph_.output()) {
            const std::string& output = graph_output.name();
            auto it = values_.find(output);
            if (it == values_.end())
                throw Error(fmt::format("{}: the graph output {} is not produced by any node",
                                        source_, quoted_name(output)));
            const Value& out = settle(output);
            if (out.form != Value::Form::Tensor && out.form != Value::Form::Flat)
                throw Error(fmt::format(
                    "{}: the graph output {} is a constant, a padded tensor or a view iostune "
                    "does not keep (channels-last, 5-D); iostune needs an NCHW or [N, features] "
                    "tensor computed from the input",
                    source_, quoted_name(output)));
            outputs.push_back(out.id);
        }
        return draft_.finish(name, outputs);
    }

private:
    using Handler = void (Converter::*)(const onnx::NodeProto&);

    static Value flat_view(int id) {
        Value v;
        v.form = Value::Form::Flat;
        v.id = id;
        return v;
    }

    static Value constant(ConstTensor tensor) {
        Value v;
        v.form = Value::Form::Constant;
        v.constant = std::make_shared<const ConstTensor>(std::move(tensor));
        return v;
    }

    std::string where(const onnx::NodeProto& node) const {
        return fmt::format("{}: node {} ({}, opset {})", source_, quoted_name(node_name(node)),
                           escaped_name(node.op_type()), opset_);
    }
    static std::string node_name(const onnx::NodeProto& node) {
        if (!node.name().empty()) return node.name();
        return node.output_size() > 0 ? node.output(0) : node.op_type();
    }
    Error fail(const onnx::NodeProto& node, const std::string& why) const {
        return Error(fmt::format("{}: {}", where(node), why));
    }
    // A size or pad from the file (or a sum of them) as the int a graph attribute holds: one
    // beyond it is refused with its value, never cut to 32 bits.
    int narrow(const onnx::NodeProto& node, int64_t value, const char* what) const {
        if (value < -kMaxDimension || value > kMaxDimension)
            throw fail(node, fmt::format("{} of {} is beyond the {} iostune supports", what, value,
                                         kMaxDimension));
        return int(value);
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
            {"ConvTranspose", &Converter::conv_transpose},
            {"LayerNormalization", &Converter::layer_norm},
            {"Clip", &Converter::clip},
            {"Sigmoid", &Converter::activation_node},
            {"HardSigmoid", &Converter::activation_node},
            {"HardSwish", &Converter::activation_node},
            {"LeakyRelu", &Converter::activation_node},
            {"Tanh", &Converter::activation_node},
            {"Gelu", &Converter::activation_node},
            {"Erf", &Converter::erf},
            {"Sub", &Converter::arithmetic},
            {"Mul", &Converter::arithmetic},
            {"Div", &Converter::arithmetic},
            {"ReduceMean", &Converter::reduce},
            {"ReduceMax", &Converter::reduce},
            {"Split", &Converter::split},
            {"Slice", &Converter::slice},
            {"Transpose", &Converter::transpose},
            {"Resize", &Converter::resize},
            {"Shape", &Converter::shape_node},
            {"PRelu", &Converter::prelu},
            {"InstanceNormalization", &Converter::instance_norm},
            {"DepthToSpace", &Converter::depth_space},
            {"SpaceToDepth", &Converter::depth_space},
            {"ReduceSum", &Converter::reduce},
            {"Unsqueeze", &Converter::squeeze},
            {"Squeeze", &Converter::squeeze},
        };
        const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
        auto it = handlers.find(node.op_type());
        if (node.output_size() == 0 || node.output(0).empty())
            throw fail(node, "the node has no output");
        // ONNX graphs assign each tensor once; a second writer would silently replace the first
        // for every later reader.
        for (const auto& output : node.output())
            if (!output.empty() && values_.count(output))
                throw fail(node, fmt::format("its output {} is already the graph input, an "
                                             "initializer or another node's output",
                                             quoted_name(output)));
        // Arity, attribute names, types and flags, as ONNX defines the op, before any reader
        // (folding included) could ignore what the node says.
        if (default_domain) check_node_schema(node, opset_, where(node));
        if (default_domain && try_fold(node)) return;
        if (!default_domain || it == handlers.end())
            throw Error(fmt::format(
                "{}: node {} has op type {}{} (opset {}), which iostune cannot import. "
                "Supported op types: {}",
                source_, quoted_name(node_name(node)), quoted_name(node.op_type()),
                default_domain ? "" : fmt::format(" of domain {}", quoted_name(node.domain())),
                opset_,
                kSupportedOps));
        try {
            (this->*(it->second))(node);
        } catch (const Error& e) {
            // The graph's own checks (shape inference) name the op, not the file and node.
            if (std::string_view(e.what()).starts_with(source_)) throw;
            throw Error(fmt::format("{}: {}", where(node), e.what()));
        }
    }

    // Evaluates a node whose inputs are all constants (shape arithmetic, weight preprocessing).
    bool try_fold(const onnx::NodeProto& node) {
        if (!is_foldable(node.op_type())) return false;
        std::vector<const ConstTensor*> inputs;
        for (int i = 0; i < node.input_size(); ++i) {
            if (!has_input(node, i)) {
                inputs.push_back(nullptr);
                continue;
            }
            const Value& v = input(node, i);
            if (v.form != Value::Form::Constant) return false;
            inputs.push_back(v.constant.get());
        }
        if (node.op_type() == "Constant") return false;
        auto outputs = fold_node(node, inputs, opset_, where(node));
        for (size_t k = 0; k < outputs.size(); ++k) define(node, int(k), constant(std::move(outputs[k])));
        return true;
    }

    // ---- inputs and outputs of a node ----

    bool has_input(const onnx::NodeProto& node, int index) const {
        return index < node.input_size() && !node.input(index).empty();
    }
    const Value& input(const onnx::NodeProto& node, int index) const {
        if (!has_input(node, index)) throw fail(node, fmt::format("input {} is missing", index));
        auto it = values_.find(node.input(index));
        if (it == values_.end())
            throw fail(node, fmt::format("input {} is not the graph input, an initializer or "
                                         "the output of an earlier node (ONNX requires nodes in "
                                         "topological order)",
                                         quoted_name(node.input(index))));
        return it->second;
    }
    const ConstTensor& constant_input(const onnx::NodeProto& node, int index,
                                      const char* what) const {
        const Value& v = input(node, index);
        if (v.form != Value::Form::Constant)
            throw fail(node, fmt::format("the {} (input {}) must be an initializer or constant; "
                                         "iostune imports models with fixed weights",
                                         what, quoted_name(node.input(index))));
        return *v.constant;
    }
    // A (transposed) convolution's parameters: its 4-D filter, then the optional bias (input 2).
    std::vector<ParamTensor> filter_and_bias(const onnx::NodeProto& node, const ConstTensor& w,
                                             int out_channels, bool bias) {
        std::vector<ParamTensor> params;
        params.push_back(
            {{int(w.dims[0]), int(w.dims[1]), int(w.dims[2]), int(w.dims[3])}, w.floats});
        if (bias)
            params.push_back({{out_channels}, float_input(node, 2, "bias", size_t(out_channels))});
        return params;
    }

    const std::vector<float>& float_input(const onnx::NodeProto& node, int index, const char* what,
                                          size_t count) const {
        const ConstTensor& t = constant_input(node, index, what);
        if (!t.is_float || t.floats.size() != count)
            throw fail(node,
                       fmt::format("the {} ({}) should hold {} float values, it holds {}", what,
                                   quoted_name(t.name), count,
                                   t.is_float ? t.floats.size() : t.ints.size()));
        return t.floats;
    }
    // A value padded with zeros (or cropped) that no Conv or pool folds: from now on the output
    // of its own spatial_pad op, which every later reader shares, also through another name for
    // the same padding of the same tensor (Identity, Dropout, an equal Pad node).
    const Value& settle(const std::string& name) {
        Value& v = values_.at(name);
        if (v.form != Value::Form::Padded || v.pad_lowest) return v;
        auto [it, fresh] = settled_pads_.try_emplace({v.id, v.pads}, kGraphInput);
        if (fresh) {
            const auto& p = v.pads;
            const SpatialPadAttrs a{int(p[0]), int(p[2]), int(p[1]), int(p[3])};
            it->second = draft_.add(OpKind::SpatialPad, a, {v.id}, v.pad_node, {});
        }
        Value settled;
        settled.id = it->second;
        v = settled;
        return v;
    }
    // Input `index` for a reader that folds no padding: a padded value settled into its op (an
    // error for -inf padding), any other value as it is.
    const Value& unpadded_input(const onnx::NodeProto& node, int index) {
        if (input(node, index).form == Value::Form::Padded) return activation(node, index);
        return input(node, index);
    }

    // A 4-D activation.
    const Value& activation(const onnx::NodeProto& node, int index) {
        if (has_input(node, index) && input(node, index).form == Value::Form::Padded)
            settle(node.input(index));
        const Value& v = input(node, index);
        if (v.form == Value::Form::Tensor) return v;
        if (v.form == Value::Form::Padded)
            throw fail(node, fmt::format("input {} comes from a Pad node with -inf; iostune "
                                         "folds such a Pad only into a following MaxPool",
                                         quoted_name(node.input(index))));
        if (v.form == Value::Form::Flat)
            throw fail(node, fmt::format("input {} is a flattened (2-D) tensor; this op needs an "
                                         "NCHW tensor",
                                         quoted_name(node.input(index))));
        if (v.form == Value::Form::ChannelsLast)
            throw fail(node, fmt::format("input {} is a channels-last [N, H, W, C] view; iostune "
                                         "supports there only per-channel operations (LayerNorm, "
                                         "MatMul, activations, arithmetic) and the Transpose back "
                                         "to NCHW",
                                         quoted_name(node.input(index))));
        if (v.form == Value::Form::Grouped || v.form == Value::Form::Shuffled)
            throw fail(node, fmt::format("input {} is a 5-D channel-group view; iostune supports "
                                         "it only as a channel shuffle (Reshape to [N, g, C/g, H, "
                                         "W], Transpose(0, 2, 1, 3, 4), Reshape back)",
                                         quoted_name(node.input(index))));
        if (v.form == Value::Form::View)
            throw fail(node, fmt::format("input {} is a reshaped view [{}] of a tensor; iostune "
                                         "reads such views only as split attention (softmax and "
                                         "sum across branches), group norm and pixel (un)shuffle",
                                         quoted_name(node.input(index)),
                                         fmt::join(v.view.logical(), ", ")));
        if (is_gelu_step(v.form))
            throw fail(node, fmt::format("input {} is part of an erf expression; iostune supports "
                                         "Erf only as GELU: x * (1 + erf(x / sqrt(2))) * 0.5",
                                         quoted_name(node.input(index))));
        throw fail(node, fmt::format("input {} is a constant; this op needs a tensor computed "
                                     "from the model input",
                                     quoted_name(node.input(index))));
    }
    // A tensor an elementwise or per-channel op can take as it is: NCHW, flattened [N, C] or
    // channels-last; the result keeps its form.
    const Value& pointwise_input(const onnx::NodeProto& node, int index) {
        const Value& v = input(node, index);
        if (v.form == Value::Form::Flat || v.form == Value::Form::ChannelsLast) return v;
        return activation(node, index);
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
                throw fail(node, fmt::format("output {} ({}) is used, and iostune computes only "
                                             "this op's main output",
                                             i, quoted_name(name)));
        }
    }
    int uses(const std::string& name) const {
        auto it = uses_.find(name);
        return it == uses_.end() ? 0 : it->second;
    }
    std::string op_name(const onnx::NodeProto& node) const { return node_name(node); }

    // ---- window geometry (Conv, pools) ----

    // Reads kernel/stride/dilation/pads/auto_pad of a window over an input of extent `in`.
    std::array<Axis, 2> window(const onnx::NodeProto& node, const NodeAttributes& attrs,
                               const Shape& in, std::array<int64_t, 2> kernel) const {
        const auto strides = attrs.get_sizes("strides", {1, 1});
        const auto dilations = attrs.get_sizes("dilations", {1, 1});
        auto pads = attrs.get_sizes("pads", {0, 0, 0, 0});
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
            throw fail(node,
                       fmt::format("auto_pad {} is not a valid value", quoted_name(auto_pad)));
        }
        return axes;
    }

    // Which padded input a Conv or pool takes as part of its own padding.
    enum class Fold {
        Zeros,               // zeros (a Conv)
        ZerosWithoutOwnPads, // zeros, where the op has no padding of its own (an AveragePool:
                             // it then counts them, as it must count the Pad's real zeros)
        Lowest,              // -inf (a MaxPool)
        Never,
    };
    // The input and the window of a Conv or pool: the op's own padding plus, where they fold, the
    // pads of the Pad and Slice nodes before it.
    struct Window {
        int input = kGraphInput;
        bool folded = false;  // the input's pads are in `axes`
        std::array<Axis, 2> axes;
    };
    Window window_of(const onnx::NodeProto& node, const NodeAttributes& attrs,
                     std::array<int64_t, 2> kernel, Fold fold) {
        const Value& v = input(node, 0);
        if (v.form == Value::Form::Padded && fold != Fold::Never) {
            const Shape s = draft_.shape(v.id);
            // Pads are bounded by kMaxDimension, so these sums do not wrap; a size a Shape cannot
            // hold does not fold, and the spatial_pad op it settles into refuses it.
            const int64_t h = s.h + v.pads[0] + v.pads[2], w = s.w + v.pads[1] + v.pads[3];
            bool folds = h > 0 && w > 0 && h <= kMaxDimension && w <= kMaxDimension &&
                         v.pad_lowest == (fold == Fold::Lowest);
            const Shape padded{s.n, s.c, int(h), int(w)};
            Window win{v.id, true, {}};
            if (folds) win.axes = window(node, attrs, padded, kernel);
            for (int a = 0; a < 2 && folds; ++a) {
                Axis& axis = win.axes[size_t(a)];
                if (fold == Fold::ZerosWithoutOwnPads && (axis.begin != 0 || axis.end != 0))
                    folds = false;
                // A side cropped and then padded by the op is no padding: the op's zeros would
                // stand where the cropped rows were.
                if ((v.pads[size_t(a)] < 0 && axis.begin > 0) ||
                    (v.pads[size_t(a) + 2] < 0 && axis.end > 0))
                    folds = false;
                axis.in = a == 0 ? s.h : s.w;
                axis.begin += v.pads[size_t(a)];
                axis.end += v.pads[size_t(a) + 2];
            }
            if (folds) return win;
        }
        const Value& x = activation(node, 0);  // a padded value not folded gets its op
        return {x.id, false, window(node, attrs, draft_.shape(x.id), kernel)};
    }

    // What the op's own padding reads as.
    enum class PadFill { Zeros, Lowest, Uncounted };

    // iostune pads both sides of an axis equally; ONNX's (begin, end) along an axis becomes:
    //  - that padding, when begin = end or `begin` on both sides gives the same windows (the extra
    //    padding at the end is never read);
    //  - for padding longer at the end that is -inf (a MaxPool) or not counted (an AveragePool
    //    with count_include_pad=0): `begin` with ceil_mode, when that gives the same windows
    //    (torch's ceil-mode windows ignore what lies past the input, and so do such pads);
    //  - for zeros: the equal part min(begin, end) (never negative), and the rest (a crop where
    //    negative) as a spatial_pad op before the op, named after it.
    struct Padding {
        int input = kGraphInput;
        int h = 0, w = 0;
    };
    Padding fit_padding(const onnx::NodeProto& node, const Window& win, PadFill fill,
                        bool& ceil_mode) {
        std::array<int64_t, 2> own{};
        std::array<int64_t, 4> rest{};  // begin_h, begin_w, end_h, end_w, as Value::pads
        bool needs_ceil = false;
        for (size_t a = 0; a < 2; ++a) {
            const Axis& axis = win.axes[a];
            const int64_t begin = axis.begin, end = axis.end;
            const bool same_windows =
                begin >= 0 &&
                (begin == end ||
                 (!ceil_mode && end >= 0 &&
                  window_count(axis.in, axis.kernel, axis.stride, axis.dilation, begin + end) ==
                      window_count(axis.in, axis.kernel, axis.stride, axis.dilation, 2 * begin)));
            if (same_windows) {
                own[a] = begin;
            } else if (fill != PadFill::Zeros && !ceil_mode && begin >= 0 && end > begin &&
                       ceil_windows(axis, begin) ==
                           window_count(axis.in, axis.kernel, axis.stride, 1, begin + end)) {
                own[a] = begin;
                needs_ceil = true;
            } else if (fill == PadFill::Zeros && !ceil_mode) {
                own[a] = std::max<int64_t>(0, std::min(begin, end));
                rest[a] = begin - own[a];
                rest[a + 2] = end - own[a];
            } else {
                throw fail(node, fmt::format(
                                     "asymmetric padding along {} (begin {}, end {}) cannot be "
                                     "expressed: iostune pads both sides equally, and takes the "
                                     "rest as zeros of its own only before a Conv or an "
                                     "AveragePool that counts padding, without ceil_mode; "
                                     "re-export the model with equal padding on both sides",
                                     a == 0 ? "H" : "W", begin, end));
            }
        }
        if (needs_ceil) {
            // ceil_mode holds for both axes: the other one must keep its windows under it.
            for (size_t a = 0; a < 2; ++a) {
                const Axis& axis = win.axes[a];
                if (ceil_windows(axis, own[a]) !=
                    window_count(axis.in, axis.kernel, axis.stride, 1, axis.begin + axis.end))
                    throw fail(node, fmt::format("asymmetric padding (begin {}, end {} along "
                                                 "H; {}, {} along W) cannot be expressed with "
                                                 "one ceil_mode for both axes",
                                                 win.axes[0].begin, win.axes[0].end,
                                                 win.axes[1].begin, win.axes[1].end));
            }
            ceil_mode = true;
        }
        Padding p{win.input, narrow(node, own[0], "a pad"), narrow(node, own[1], "a pad")};
        if (rest != std::array<int64_t, 4>{}) {
            const SpatialPadAttrs a{narrow(node, rest[0], "a pad"), narrow(node, rest[2], "a pad"),
                                    narrow(node, rest[1], "a pad"), narrow(node, rest[3], "a pad")};
            p.input = draft_.add(OpKind::SpatialPad, a, {win.input},
                                 fmt::format("{}:pad", op_name(node)), {});
        }
        return p;
    }

    // torch's window count of a ceil_mode pool with `pad` on both sides: the last window must
    // start inside the input or its left padding.
    static int64_t ceil_windows(const Axis& axis, int64_t pad) {
        const int64_t span = axis.in + 2 * pad - axis.dilation * (axis.kernel - 1) - 1;
        if (span < 0) return 0;
        int64_t out = (span + axis.stride - 1) / axis.stride + 1;
        if ((out - 1) * axis.stride >= axis.in + pad) --out;
        return out;
    }

    // ---- handlers ----

    void conv(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const ConstTensor& w = constant_input(node, 1, "weight");
        if (w.dims.size() != 4 || !w.is_float)
            throw fail(node,
                       "only 2-D convolutions with float weights [M, C/group, kH, kW] are "
                       "supported");
        const Window win = window_of(node, attrs, {w.dims[2], w.dims[3]}, Fold::Zeros);
        const Shape in = draft_.shape(win.input);
        const int64_t group = attrs.get_size("group", 1);
        if (group <= 0 || w.dims[1] * group != in.c || w.dims[0] % group != 0)
            throw fail(node, fmt::format("weight shape [{}] and group {} do not fit an input with "
                                         "{} channels",
                                         fmt::join(w.dims, ", "), group, in.c));
        const auto kernel = attrs.get_ints("kernel_shape", {w.dims[2], w.dims[3]});
        if (kernel != std::vector<int64_t>{w.dims[2], w.dims[3]})
            throw fail(node, fmt::format("kernel_shape [{}] disagrees with the weight shape [{}]",
                                         fmt::join(kernel, ", "), fmt::join(w.dims, ", ")));
        const auto& axes = win.axes;
        bool ceil_mode = false;
        const Padding padding = fit_padding(node, win, PadFill::Zeros, ceil_mode);

        ConvAttrs a;
        a.out_channels = int(w.dims[0]);
        a.kernel_h = int(w.dims[2]);
        a.kernel_w = int(w.dims[3]);
        a.stride_h = int(axes[0].stride);
        a.stride_w = int(axes[1].stride);
        a.dilation_h = int(axes[0].dilation);
        a.dilation_w = int(axes[1].dilation);
        a.pad_h = padding.h;
        a.pad_w = padding.w;
        a.groups = int(group);
        a.bias = has_input(node, 2);
        std::vector<ParamTensor> params = filter_and_bias(node, w, a.out_channels, a.bias);
        define_op(node,
                  draft_.add(OpKind::Conv, a, {padding.input}, op_name(node), std::move(params)));
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
        affine(node, x, std::move(scale), std::move(shift));
    }

    // A per-channel affine map of `x` (folded into the Conv or Linear before it when possible).
    void affine(const onnx::NodeProto& node, const Value& x, std::vector<float> scale,
                std::vector<float> shift) {
        const int c = int(scale.size());
        std::vector<ParamTensor> params;
        params.push_back({{c}, std::move(scale)});
        params.push_back({{c}, std::move(shift)});
        define_op(node,
                  draft_.add(OpKind::ChannelAffine, ChannelAffineAttrs{}, {x.id}, op_name(node),
                             std::move(params)),
                  x.form);
    }

    void unary(const onnx::NodeProto& node, OpKind kind, OpAttrs attrs) {
        const Value& x = pointwise_input(node, 0);
        define_op(node, draft_.add(kind, std::move(attrs), {x.id}, op_name(node), {}), x.form);
    }

    void relu(const onnx::NodeProto& node) { unary(node, OpKind::Relu, ReluAttrs{}); }

    void pool(const onnx::NodeProto& node, OpKind kind) {
        const NodeAttributes attrs(node, where(node));
        require_unused_outputs(node, 1);
        const bool average = kind == OpKind::AvgPool;
        const auto kernel = attrs.get_sizes("kernel_shape", {});
        if (kernel.size() != 2) throw fail(node, "kernel_shape must have 2 values (NCHW input)");
        if (attrs.get_ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1})
            throw fail(node, "dilated pooling is not supported");
        bool ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
        bool count_include_pad = attrs.get_int("count_include_pad", 0) != 0;
        // A MaxPool takes a -inf Pad as its own padding, which never wins a window's maximum; an
        // AveragePool takes zeros as padding it counts. Other padded inputs get their own op.
        const Fold fold = !average ? Fold::Lowest
                                   : (ceil_mode ? Fold::Never : Fold::ZerosWithoutOwnPads);
        const Window win = window_of(node, attrs, {kernel[0], kernel[1]}, fold);
        if (win.folded && ceil_mode)
            throw fail(node, "a MaxPool after a Pad node with -inf must have ceil_mode=0");
        // Pad wrote real zeros, which the average counts: count_include_pad over the union.
        if (win.folded && average) count_include_pad = true;
        const PadFill fill = !average ? PadFill::Lowest
                                      : (count_include_pad ? PadFill::Zeros : PadFill::Uncounted);
        const Padding padding = fit_padding(node, win, fill, ceil_mode);
        PoolAttrs a;
        a.kernel_h = int(kernel[0]);
        a.kernel_w = int(kernel[1]);
        a.stride_h = int(win.axes[0].stride);
        a.stride_w = int(win.axes[1].stride);
        a.pad_h = padding.h;
        a.pad_w = padding.w;
        a.ceil_mode = ceil_mode;
        a.count_include_pad = count_include_pad;
        if (2 * int64_t(a.pad_h) > a.kernel_h || 2 * int64_t(a.pad_w) > a.kernel_w)
            throw fail(node, fmt::format("padding {}x{} is more than half the kernel {}x{}, which "
                                         "PyTorch (and iostune) does not allow",
                                         a.pad_h, a.pad_w, a.kernel_h, a.kernel_w));
        define_op(node, draft_.add(kind, a, {padding.input}, op_name(node), {}));
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
        if (attrs.get_string("mode", "constant") != "constant")
            throw fail(node, "only constant (zero) padding is supported");
        const ConstTensor& pads = constant_input(node, 1, "pads");
        if (pads.is_float || pads.ints.size() != 8)
            throw fail(node, "pads must be 8 integers (begin and end of N, C, H, W)");
        bool lowest = false;
        if (has_input(node, 2)) {
            const ConstTensor& value = constant_input(node, 2, "constant_value");
            const bool zero = value.is_float ? (value.floats.size() == 1 && value.floats[0] == 0.0f)
                                             : (value.ints.size() == 1 && value.ints[0] == 0);
            lowest = value.is_float && value.floats.size() == 1 &&
                     value.floats[0] == -std::numeric_limits<float>::infinity();
            if (!zero && !lowest)
                throw fail(node, "only padding with zeros (or with -inf before a MaxPool) is "
                                 "supported");
        }
        const auto& p = pads.ints;
        for (int64_t value : p) narrow(node, value, "a pad");
        if (p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0)
            throw fail(node, "only spatial (H, W) padding is supported");
        const std::array<int64_t, 4> spatial{p[2], p[3], p[6], p[7]};
        if (lowest && std::any_of(spatial.begin(), spatial.end(), [](int64_t v) { return v < 0; }))
            throw fail(node, "negative pads (cropping) with -inf are not supported; crop with "
                             "zero padding or a Slice");
        define_padded(node, spatial, lowest);
    }

    // Defines the node's output as its input 0 padded by `pads` (begin_h, begin_w, end_h, end_w;
    // negative crops), for the op that reads it to fold or settle. Zero padding of a value padded
    // with zeros joins it, except where a side was cropped and is now padded (which would put
    // zeros where the cropped rows were).
    void define_padded(const onnx::NodeProto& node, std::array<int64_t, 4> pads, bool lowest) {
        const Value& in = input(node, 0);
        bool joins = in.form == Value::Form::Padded && !in.pad_lowest && !lowest;
        for (size_t k = 0; k < 4 && joins; ++k) joins = !(in.pads[k] < 0 && pads[k] > 0);
        define_padded(node, joins ? in : activation(node, 0), pads, lowest);
    }
    void define_padded(const onnx::NodeProto& node, const Value& x, std::array<int64_t, 4> pads,
                       bool lowest) {
        Value v = x;
        for (size_t k = 0; k < 4; ++k)
            v.pads[k] = narrow(node, (x.form == Value::Form::Padded ? x.pads[k] : 0) + pads[k],
                               "a pad");
        const bool none = v.pads == std::array<int64_t, 4>{};
        v.form = none ? Value::Form::Tensor : Value::Form::Padded;
        v.pad_lowest = lowest;
        v.pad_node = op_name(node);
        define(node, 0, v);
    }

    void concat(const onnx::NodeProto& node) {
        if (view_concat(node)) return;
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

    // Add, Sub, Mul, Div. A constant operand that is one value per channel (or a scalar)
    // becomes the bias of the Conv/Linear right before (Add, Sub) or a ChannelAffine map;
    // two tensors become an Add (equal shapes) or a broadcasting Binary op. SiLU (x * sigmoid(x)),
    // HardSwish (x * hardsigmoid(x)) and GELU's erf form are recognised here.
    void arithmetic(const onnx::NodeProto& node) {
        if (view_arithmetic(node)) return;
        const std::string& op = node.op_type();
        if (node.input_size() != 2) throw fail(node, "needs exactly two inputs");
        const Value& a = unpadded_input(node, 0);
        const Value& b = unpadded_input(node, 1);
        if (gelu_step(node, a, b)) return;
        const bool a_const = a.form == Value::Form::Constant;
        const bool b_const = b.form == Value::Form::Constant;
        if (a_const || b_const) {
            const int tensor_index = a_const ? 1 : 0;
            const Value& x = pointwise_input(node, tensor_index);
            const std::vector<float> c = per_channel_constant(node, 1 - tensor_index, x);
            const size_t n = c.size();
            const bool constant_first = a_const;
            if ((op == "Add" || (op == "Sub" && !constant_first)) && try_add_bias(node, tensor_index, x, c, op == "Sub"))
                return;
            std::vector<float> scale(n, 1.0f), shift(n, 0.0f);
            for (size_t i = 0; i < n; ++i) {
                if (op == "Add") shift[i] = c[i];
                else if (op == "Sub" && !constant_first) shift[i] = -c[i];
                else if (op == "Sub") scale[i] = -1.0f, shift[i] = c[i];
                else if (op == "Mul") scale[i] = c[i];
                else if (op == "Div" && !constant_first) scale[i] = 1.0f / c[i];
                else
                    throw fail(node, "dividing a constant by a tensor is not supported");
            }
            affine(node, x, std::move(scale), std::move(shift));
            return;
        }
        if (op == "Mul" && fused_gate(node, a, b)) return;
        const Value& x = pointwise_input(node, 0);
        const Value& y = pointwise_input(node, 1);
        if (x.form != y.form)
            throw fail(node, "the two inputs are in different layouts (NCHW, flattened or "
                             "channels-last)");
        if (op == "Add" && draft_.shape(x.id) == draft_.shape(y.id)) {
            define_op(node, draft_.add(OpKind::Add, AddAttrs{}, {x.id, y.id}, op_name(node), {}),
                      x.form);
            return;
        }
        if (x.form != Value::Form::Tensor && !(draft_.shape(x.id) == draft_.shape(y.id)))
            throw fail(node, "broadcasting is supported only between NCHW tensors");
        static const std::map<std::string, BinaryOp> ops = {
            {"Add", BinaryOp::Add}, {"Sub", BinaryOp::Sub}, {"Mul", BinaryOp::Mul},
            {"Div", BinaryOp::Div}};
        define_op(node,
                  draft_.add(OpKind::Binary, BinaryAttrs{ops.at(op)}, {x.id, y.id}, op_name(node),
                             {}),
                  x.form);
    }

    void add(const onnx::NodeProto& node) {
        if (node.op_type() == "Add" && node.input_size() == 2) {
            arithmetic(node);
            return;
        }
        // Sum of several tensors of one shape.
        const Value& first = pointwise_input(node, 0);
        std::vector<int> inputs;
        for (int i = 0; i < node.input_size(); ++i) {
            const Value& v = pointwise_input(node, i);
            if (v.form != first.form || !(draft_.shape(v.id) == draft_.shape(first.id)))
                throw fail(node, "inputs of different shapes (broadcasting) are not supported");
            inputs.push_back(v.id);
        }
        if (inputs.size() < 2) throw fail(node, "needs at least two inputs");
        define_op(node, draft_.add(OpKind::Add, AddAttrs{}, inputs, op_name(node), {}), first.form);
    }

    // The channel count of a tensor, whatever its form (a channels-last view's last axis).
    int channels(const Value& x) const { return draft_.shape(x.id).c; }

    // The constant input `index`, broadcast against `x`, as one value per channel of x; an error
    // for any other shape.
    std::vector<float> per_channel_constant(const onnx::NodeProto& node, int index,
                                            const Value& x) const {
        const ConstTensor& t = constant_input(node, index, "constant operand");
        const Shape s = draft_.shape(x.id);
        const int c = s.c;
        std::vector<float> values;
        if (t.is_float) values = t.floats;
        else values.assign(t.ints.begin(), t.ints.end());
        int64_t non_unit = 0;
        for (int64_t d : t.dims) non_unit += d != 1;
        // The axis the channels sit on, counted from the end: NCHW -3, [N, C] and [N, H, W, C] -1.
        const size_t from_end = x.form == Value::Form::Tensor ? 3 : 1;
        const bool flat_ok = x.form != Value::Form::Flat || (s.h == 1 && s.w == 1);
        const bool scalar = t.elements() == 1 && t.dims.size() <= 4;
        const bool per_channel = t.elements() == c && non_unit <= 1 && flat_ok &&
                                 t.dims.size() >= from_end && t.dims.size() <= 4 &&
                                 t.dims[t.dims.size() - from_end] == c;
        if (scalar) return std::vector<float>(size_t(c), values.at(0));
        if (per_channel) return values;
        throw fail(node, fmt::format("the constant operand of shape [{}] is neither a scalar nor "
                                     "one value per channel ({}) of the tensor; iostune supports "
                                     "only those",
                                     fmt::join(t.dims, ", "), c));
    }

    // x + c (or x - c) right after a Conv or Linear that nothing else reads: into its bias.
    bool try_add_bias(const onnx::NodeProto& node, int tensor_index, const Value& x,
                      const std::vector<float>& c, bool subtract) {
        if (x.id == kGraphInput || uses(node.input(tensor_index)) != 1) return false;
        const DraftOp& producer = draft_.op(x.id);
        if (producer.kind != OpKind::Linear && producer.kind != OpKind::Conv) return false;
        std::vector<float> bias = c;
        if (subtract)
            for (float& v : bias) v = -v;
        draft_.add_bias(x.id, std::move(bias));
        define(node, 0, x);
        return true;
    }

    // x * sigmoid(x) -> SiLU, x * hardsigmoid(x) (alpha 1/6, beta 1/2) -> HardSwish.
    bool fused_gate(const onnx::NodeProto& node, const Value& a, const Value& b) {
        for (int k = 0; k < 2; ++k) {
            const Value& x = k == 0 ? a : b;
            const Value& gate = k == 0 ? b : a;
            if (gate.form != x.form || gate.id == kGraphInput || x.form == Value::Form::Constant)
                continue;
            const DraftOp& g = draft_.op(gate.id);
            if (g.kind != OpKind::Activation || g.inputs.at(0) != x.id) continue;
            const auto& act = std::get<ActivationAttrs>(g.attrs);
            ActivationFunction fused;
            if (act.function == ActivationFunction::Sigmoid) {
                fused = ActivationFunction::Silu;
            } else if (act.function == ActivationFunction::HardSigmoid &&
                       std::abs(act.alpha - 1.0f / 6.0f) < 1e-6f && act.beta == 0.5f) {
                fused = ActivationFunction::HardSwish;
            } else {
                continue;
            }
            define_op(node,
                      draft_.add(OpKind::Activation, ActivationAttrs{fused, 0.0f, 0.0f}, {x.id},
                                 op_name(node), {}),
                      x.form);
            return true;
        }
        return false;
    }

    // GELU's erf form as PyTorch exports it: Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5.
    bool gelu_step(const onnx::NodeProto& node, const Value& a, const Value& b) {
        const std::string& op = node.op_type();
        const bool a_step = is_gelu_step(a.form);
        if (!a_step && !is_gelu_step(b.form)) return false;
        const Value& step = a_step ? a : b;
        const Value& other = a_step ? b : a;
        auto constant_is = [&](double want) {
            if (other.form != Value::Form::Constant || other.constant->elements() != 1) return false;
            const double v = other.constant->is_float ? double(other.constant->floats[0])
                                                      : double(other.constant->ints[0]);
            return std::abs(v - want) < 1e-6;
        };
        Value next = step;
        if (step.form == Value::Form::GeluErf && op == "Add" && constant_is(1.0)) {
            next.form = Value::Form::GeluErfPlusOne;
        } else if (step.form == Value::Form::GeluErfPlusOne && op == "Mul" &&
                   other.form == step.pre_form && other.id == step.id) {
            next.form = Value::Form::GeluDouble;
        } else if (step.form == Value::Form::GeluDouble && op == "Mul" && constant_is(0.5)) {
            define_op(node,
                      draft_.add(OpKind::Activation,
                                 ActivationAttrs{ActivationFunction::Gelu, 0.0f, 0.0f}, {step.id},
                                 op_name(node), {}),
                      step.pre_form);
            return true;
        } else {
            throw fail(node, "iostune supports Erf only inside GELU's erf form, x * (1 + erf(x / "
                             "sqrt(2))) * 0.5, as PyTorch exports it");
        }
        define(node, 0, next);
        return true;
    }

    void erf(const onnx::NodeProto& node) {
        const Value& v = pointwise_input(node, 0);
        // Its input must be x / sqrt(2): an affine map of x with scale 1/sqrt(2), no shift.
        bool ok = v.id != kGraphInput && draft_.op(v.id).kind == OpKind::ChannelAffine;
        if (ok) {
            const DraftOp& scaled = draft_.op(v.id);
            for (float f : scaled.params[0].values) ok = ok && std::abs(f - float(M_SQRT1_2)) < 1e-6f;
            for (float f : scaled.params[1].values) ok = ok && f == 0.0f;
        }
        if (!ok)
            throw fail(node, "iostune supports Erf only inside GELU's erf form, x * (1 + erf(x / "
                             "sqrt(2))) * 0.5, as PyTorch exports it");
        Value step;
        step.form = Value::Form::GeluErf;
        step.pre_form = v.form;
        step.id = draft_.op(v.id).inputs.at(0);
        define(node, 0, step);
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
            throw fail(node, fmt::format("input {} must be a 2-D tensor [N, features] (Flatten "
                                         "or Reshape the NCHW tensor first)",
                                         quoted_name(node.input(0))));
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
        if (input(node, 0).form == Value::Form::ChannelsLast) {
            pointwise_matmul(node);
            return;
        }
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
        if (view_flatten(node)) return;
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
        define(node, 0, flat_view(x.id));
    }

    void reshape(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        if (view_reshape(node)) return;
        if (shuffle_reshape(node)) return;
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
            else  // a product past int64 matches no shape: 0 stands for it
                known = checked_multiply(known, shape[i]).value_or(0);
        }
        const int64_t total = int64_t(s.n) * s.c * s.h * s.w;
        if (inferred >= 0 && known > 0 && total % known == 0)
            shape[size_t(inferred)] = total / known;
        const std::vector<int64_t> flat{s.n, int64_t(s.c) * s.h * s.w};
        const std::vector<int64_t> nchw{s.n, s.c, s.h, s.w};
        if (shape == flat) {
            define(node, 0, flat_view(x.id));
        } else if (shape == nchw && x.form == Value::Form::Tensor) {
            define(node, 0, x);
        } else {
            throw fail(node, fmt::format("reshaping [{}] to [{}] is not supported (only "
                                         "flattening to [N, C*H*W] before the classifier)",
                                         fmt::join(dims, ", "), fmt::join(target.ints, ", ")));
        }
    }

    // ---- channels-last blocks, channel shuffle ----

    // A Linear over the channels of a channels-last view: a 1x1 convolution.
    void pointwise_matmul(const onnx::NodeProto& node) {
        const Value& x = input(node, 0);
        const ConstTensor& w = constant_input(node, 1, "weight");
        const int c = channels(x);
        if (w.dims.size() != 2 || !w.is_float || w.dims[0] != c)
            throw fail(node, fmt::format("weight of shape [{}] does not fit {} channels",
                                         fmt::join(w.dims, ", "), c));
        const int out = int(w.dims[1]);
        std::vector<float> weight(size_t(out) * size_t(c));
        for (int o = 0; o < out; ++o)
            for (int i = 0; i < c; ++i)
                weight[size_t(o) * size_t(c) + size_t(i)] = w.floats[size_t(i) * size_t(out) + size_t(o)];
        ConvAttrs a;
        a.out_channels = out;
        a.bias = false;
        std::vector<ParamTensor> params;
        params.push_back({{out, c, 1, 1}, std::move(weight)});
        define_op(node, draft_.add(OpKind::Conv, a, {x.id}, op_name(node), std::move(params)),
                  Value::Form::ChannelsLast);
    }

    void transpose(const onnx::NodeProto& node) {
        if (view_transpose(node)) return;
        const NodeAttributes attrs(node, where(node));
        const Value& x = unpadded_input(node, 0);
        const auto perm = attrs.get_ints("perm", {});
        using P = std::vector<int64_t>;
        Value v = x;
        if (x.form == Value::Form::Tensor && perm == P{0, 2, 3, 1}) {
            v.form = Value::Form::ChannelsLast;
        } else if (x.form == Value::Form::ChannelsLast && perm == P{0, 3, 1, 2}) {
            v.form = Value::Form::Tensor;
        } else if (x.form == Value::Form::Grouped && perm == P{0, 2, 1, 3, 4}) {
            v.form = Value::Form::Shuffled;
        } else if (!(x.form == Value::Form::Tensor && perm == P{0, 1, 2, 3})) {
            throw fail(node, fmt::format("transposing with perm [{}] is not supported: iostune "
                                         "takes NCHW -> NHWC (0, 2, 3, 1) and back (0, 3, 1, 2) "
                                         "around per-channel ops, and a channel shuffle's "
                                         "(0, 2, 1, 3, 4)",
                                         fmt::join(perm, ", ")));
        }
        if (x.form == Value::Form::Tensor) activation(node, 0);
        define(node, 0, v);
    }

    // Reshape of an NCHW tensor to [N, g, C/g, H, W], and of its transposed view back to
    // [N, C, H, W]: a channel shuffle. False when the node is no such reshape.
    bool shuffle_reshape(const onnx::NodeProto& node) {
        const Value& x = input(node, 0);
        if (x.form != Value::Form::Tensor && x.form != Value::Form::Shuffled) return false;
        const ConstTensor& target = constant_input(node, 1, "shape");
        if (target.is_float) return false;
        const Shape s = draft_.shape(x.id);
        std::vector<int64_t> shape = target.ints;
        if (!shape.empty()) shape[0] = s.n;  // the batch is ours to bind
        int64_t known = 1;
        int inferred = -1;
        for (size_t i = 0; i < shape.size(); ++i) {
            if (shape[i] == -1) inferred = int(i);
            else known = checked_multiply(known, shape[i]).value_or(0);  // 0: no shape
        }
        const int64_t total = s.elements();
        if (inferred >= 0 && known > 0) shape[size_t(inferred)] = total / known;
        if (x.form == Value::Form::Tensor) {
            if (shape.size() != 5 || shape[3] != s.h || shape[4] != s.w || shape[1] <= 0 ||
                checked_multiply(shape[1], shape[2]) != std::optional<int64_t>(s.c))
                return false;
            Value v = x;
            v.form = Value::Form::Grouped;
            v.groups = int(shape[1]);
            define(node, 0, v);
            return true;
        }
        if (shape != std::vector<int64_t>{s.n, s.c, s.h, s.w})
            throw fail(node, fmt::format("a transposed channel-group view must be reshaped back to "
                                         "[N, C, H, W] = [{}, {}, {}, {}], not [{}]",
                                         s.n, s.c, s.h, s.w, fmt::join(target.ints, ", ")));
        define_op(node, draft_.add(OpKind::ChannelShuffle, ChannelShuffleAttrs{x.groups}, {x.id},
                                   op_name(node), {}));
        return true;
    }

    void layer_norm(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        require_unused_outputs(node, 1);
        const Value& x = unpadded_input(node, 0);
        const int64_t axis = attrs.get_int("axis", -1);
        const Shape s = draft_.shape(x.id);
        // Over the channels only: the last axis of a channels-last view, or an NCHW tensor's
        // channels when its map is 1x1 (axis 1 then normalises C*1*1).
        const bool over_channels =
            (x.form == Value::Form::ChannelsLast && (axis == -1 || axis == 3)) ||
            ((x.form == Value::Form::Tensor || x.form == Value::Form::Flat) && s.h == 1 &&
             s.w == 1 && (axis == 1 || axis == -1 || (x.form == Value::Form::Tensor && axis == -3)));
        if (!over_channels)
            throw fail(node, fmt::format("LayerNormalization along axis {} is not supported; "
                                         "iostune normalises over channels (a channels-last "
                                         "tensor's last axis, as ConvNeXt's LayerNorm)",
                                         axis));
        std::vector<float> gamma = float_input(node, 1, "scale", size_t(s.c));
        std::vector<float> beta(size_t(s.c), 0.0f);
        if (has_input(node, 2)) beta = float_input(node, 2, "bias", size_t(s.c));
        std::vector<ParamTensor> params;
        params.push_back({{s.c}, std::move(gamma)});
        params.push_back({{s.c}, std::move(beta)});
        define_op(node,
                  draft_.add(OpKind::ChannelNorm, ChannelNormAttrs{attrs.get_float("epsilon", 1e-5f)},
                             {x.id}, op_name(node), std::move(params)),
                  x.form);
    }

    // ---- activations, reductions, slices, resizing ----

    void activation_node(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const std::string& op = node.op_type();
        ActivationAttrs a;
        if (op == "Sigmoid") {
            a.function = ActivationFunction::Sigmoid;
        } else if (op == "Tanh") {
            a.function = ActivationFunction::Tanh;
        } else if (op == "HardSigmoid") {
            a = {ActivationFunction::HardSigmoid, attrs.get_float("alpha", 0.2f),
                 attrs.get_float("beta", 0.5f)};
        } else if (op == "HardSwish") {
            a.function = ActivationFunction::HardSwish;
        } else if (op == "LeakyRelu") {
            a = {ActivationFunction::LeakyRelu, attrs.get_float("alpha", 0.01f), 0.0f};
        } else if (op == "Gelu") {
            if (attrs.get_string("approximate", "none") != "none")
                throw fail(node, "only the exact (erf) GELU is supported, not approximate='tanh'");
            a.function = ActivationFunction::Gelu;
        }
        unary(node, OpKind::Activation, a);
    }

    void clip(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        float low = std::numeric_limits<float>::lowest();
        float high = std::numeric_limits<float>::max();
        auto bound = [&](int index, float& value) {
            if (!has_input(node, index)) return;
            const ConstTensor& t = constant_input(node, index, index == 1 ? "min" : "max");
            if (t.elements() != 1) throw fail(node, "min and max must be scalars");
            value = t.is_float ? t.floats[0] : float(t.ints[0]);
        };
        if (opset_ < 11) {
            low = attrs.get_float("min", low);
            high = attrs.get_float("max", high);
        } else {
            bound(1, low);
            bound(2, high);
        }
        if (low == 0.0f && high == std::numeric_limits<float>::max()) {
            unary(node, OpKind::Relu, ReluAttrs{});
            return;
        }
        unary(node, OpKind::Activation, ActivationAttrs{ActivationFunction::Clip, low, high});
    }

    // ReduceMean / ReduceMax / ReduceSum over the spatial axes: a global pool (keepdims=0 gives
    // [N, C]); over the branches of a split-attention view, view_reduce().
    void reduce(const onnx::NodeProto& node) {
        if (view_reduce(node)) return;
        const NodeAttributes attrs(node, where(node));
        const Value& x = unpadded_input(node, 0);
        std::vector<int64_t> axes = attrs.get_ints("axes", {});
        if (has_input(node, 1)) axes = constant_input(node, 1, "axes").ints;
        for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
        std::sort(axes.begin(), axes.end());
        const bool keep = attrs.get_int("keepdims", 1) != 0;
        const std::vector<int64_t> spatial =
            x.form == Value::Form::ChannelsLast ? std::vector<int64_t>{1, 2}
                                                : std::vector<int64_t>{2, 3};
        if ((x.form != Value::Form::Tensor && x.form != Value::Form::ChannelsLast) ||
            axes != spatial)
            throw fail(node, fmt::format("reducing over axes [{}] is not supported (only over H "
                                         "and W of an NCHW tensor: axes [2, 3])",
                                         fmt::join(axes, ", ")));
        PoolAttrs a;
        a.global = true;
        const OpKind kind = node.op_type() == "ReduceMax" ? OpKind::MaxPool : OpKind::AvgPool;
        int id = draft_.add(kind, a, {x.id}, op_name(node), {});
        // A sum over the plane is its mean times its size.
        const Shape s = draft_.shape(x.id);
        if (node.op_type() == "ReduceSum") id = scaled(node, id, float(int64_t(s.h) * s.w));
        define_op(node, id, keep ? x.form : Value::Form::Flat);
    }

    // Whether ONNX `axis` (possibly negative) is the channel axis of a 4-D tensor in x's form.
    bool is_channel_axis(const Value& x, int64_t axis) const {
        if (x.form == Value::Form::ChannelsLast) return axis == 3 || axis == -1;
        return axis == 1 || axis == -3;
    }

    void slice_channels(const onnx::NodeProto& node, int output, const Value& x, int begin,
                        int end) {
        Value v = x;
        const int c = channels(x);
        if (begin != 0 || end != c) {
            const std::string name =
                output == 0 ? op_name(node) : fmt::format("{}:{}", op_name(node), output);
            v.id = draft_.add(OpKind::ChannelSlice, ChannelSliceAttrs{begin, end}, {x.id}, name, {});
        }
        define(node, output, v);
    }

    void split(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = pointwise_input(node, 0);
        const int64_t axis = attrs.get_int("axis", 0);
        if (x.form == Value::Form::Flat || !is_channel_axis(x, axis))
            throw fail(node, fmt::format("splitting along axis {} is not supported (only along "
                                         "channels)",
                                         axis));
        const int c = channels(x);
        std::vector<int64_t> sizes = attrs.get_ints("split", {});
        if (has_input(node, 1)) sizes = constant_input(node, 1, "split").ints;
        if (sizes.empty()) {
            if (c % node.output_size() != 0)
                throw fail(node, fmt::format("{} channels do not split into {} equal parts", c,
                                             node.output_size()));
            sizes.assign(size_t(node.output_size()), c / node.output_size());
        }
        int64_t total = 0;  // each size within [0, c] first, so the sum cannot wrap
        for (int64_t v : sizes) total += v < 0 || v > c ? int64_t(c) + 1 : v;
        if (int(sizes.size()) != node.output_size() || total != c)
            throw fail(node, fmt::format("split sizes [{}] do not cover {} channels with {} "
                                         "outputs",
                                         fmt::join(sizes, ", "), c, node.output_size()));
        int begin = 0;
        for (int k = 0; k < node.output_size(); ++k) {
            const int end = begin + int(sizes[size_t(k)]);
            if (!node.output(k).empty()) slice_channels(node, k, x, begin, end);
            begin = end;
        }
    }

    // Slice along channels (a channel_slice op), along H and W (a crop, as negative padding), or
    // both.
    void slice(const onnx::NodeProto& node) {
        if (stepped_slice(node)) return;
        const Value& x = input(node, 0);
        if (x.form == Value::Form::Flat)
            throw fail(node, "slicing a flattened tensor is not supported");
        const auto& starts = constant_input(node, 1, "starts").ints;
        const auto& ends = constant_input(node, 2, "ends").ints;
        std::vector<int64_t> axes, steps;
        if (has_input(node, 3)) axes = constant_input(node, 3, "axes").ints;
        if (has_input(node, 4)) steps = constant_input(node, 4, "steps").ints;
        if (axes.empty())
            for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
        const Shape s = draft_.shape(x.id);
        const auto& p = x.pads;
        const bool padded = x.form == Value::Form::Padded;
        const std::array<int64_t, 4> extent =
            x.form == Value::Form::ChannelsLast
                ? std::array<int64_t, 4>{s.n, s.h, s.w, s.c}
                : std::array<int64_t, 4>{s.n, s.c, s.h + (padded ? p[0] + p[2] : 0),
                                         s.w + (padded ? p[1] + p[3] : 0)};
        const bool spatial_ok = x.form == Value::Form::Tensor || padded;
        int begin = 0, end = s.c;
        std::array<int64_t, 4> crop{};  // as Value::pads: begin_h, begin_w, end_h, end_w
        for (size_t k = 0; k < axes.size(); ++k) {
            const int64_t axis = axes[k] < 0 ? axes[k] + 4 : axes[k];
            if (axis < 0 || axis > 3 || k >= starts.size() || k >= ends.size())
                throw fail(node, "starts, ends and axes do not fit a 4-D tensor");
            const int64_t size = extent[size_t(axis)];
            int64_t b = starts[k] < 0 ? starts[k] + size : starts[k];
            int64_t e = ends[k] < 0 ? ends[k] + size : ends[k];
            b = std::clamp<int64_t>(b, 0, size);
            e = std::clamp<int64_t>(e, 0, size);
            const bool whole = b == 0 && e == size && (steps.empty() || steps[k] == 1);
            if (whole) continue;
            const bool spatial = spatial_ok && (axis == 2 || axis == 3);
            if ((!is_channel_axis(x, axis) && !spatial) || (!steps.empty() && steps[k] != 1) ||
                e <= b)
                throw fail(node, fmt::format("slicing axis {} [{}, {}){} is not supported (only a "
                                             "non-empty range of channels, H or W of an NCHW "
                                             "tensor, step 1)",
                                             axes[k], starts[k], ends[k],
                                             steps.empty() ? "" : fmt::format(" step {}", steps[k])));
            if (spatial) {
                crop[size_t(axis) - 2] = -b;
                crop[size_t(axis)] = -(size - e);
            } else {
                begin = int(b);
                end = int(e);
            }
        }
        const bool channels_sliced = begin != 0 || end != s.c;
        if (crop == std::array<int64_t, 4>{}) {
            slice_channels(node, 0, pointwise_input(node, 0), begin, end);
        } else if (channels_sliced) {
            Value sliced;
            sliced.id = draft_.add(OpKind::ChannelSlice, ChannelSliceAttrs{begin, end},
                                   {activation(node, 0).id}, op_name(node) + ":channels", {});
            define_padded(node, sliced, crop, false);
        } else {
            define_padded(node, crop, false);
        }
    }

    void resize(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = activation(node, 0);
        const Shape s = draft_.shape(x.id);
        const std::string mode = attrs.get_string("mode", "nearest");
        const std::string transform =
            attrs.get_string("coordinate_transformation_mode", "half_pixel");
        ResizeAttrs a;
        if (mode == "nearest") {
            const std::string rounding = attrs.get_string("nearest_mode", "round_prefer_floor");
            if (transform != "asymmetric" || rounding != "floor")
                throw fail(node, fmt::format("nearest resizing with coordinate_transformation_mode "
                                             "{} and nearest_mode {} is not supported (only "
                                             "PyTorch's: 'asymmetric' and 'floor')",
                                             quoted_name(transform), quoted_name(rounding)));
            a.mode = ResizeMode::Nearest;
        } else if (mode == "linear") {
            a.mode = ResizeMode::Bilinear;
            if (transform == "align_corners") a.align_corners = true;
            else if (transform != "pytorch_half_pixel" && transform != "half_pixel")
                throw fail(node, fmt::format("bilinear resizing with coordinate_transformation_"
                                             "mode {} is not supported (only half_pixel, "
                                             "pytorch_half_pixel and align_corners)",
                                             quoted_name(transform)));
        } else {
            throw fail(node, fmt::format("resize mode {} is not supported (only nearest and "
                                         "linear)",
                                         quoted_name(mode)));
        }
        if (attrs.get_int("antialias", 0) != 0) throw fail(node, "antialias is not supported");
        // It re-weights samples next to the border, which iostune's resizing does not do.
        if (attrs.get_int("exclude_outside", 0) != 0)
            throw fail(node, "exclude_outside=1 is not supported");
        auto present = [&](int index) {
            return has_input(node, index) && constant_input(node, index, "scales/sizes").elements() > 0;
        };
        if (present(3)) {
            const auto& sizes = constant_input(node, 3, "sizes").ints;
            if (sizes.size() != 4 || sizes[1] != s.c)
                throw fail(node, fmt::format("sizes [{}] must resize only H and W of a 4-D tensor",
                                             fmt::join(sizes, ", ")));
            a.out_h = narrow(node, sizes[2], "the output height");
            a.out_w = narrow(node, sizes[3], "the output width");
        } else if (present(2)) {
            const ConstTensor& t = constant_input(node, 2, "scales");
            if (!t.is_float || t.floats.size() != 4 || t.floats[0] != 1.0f || t.floats[1] != 1.0f)
                throw fail(node, "scales must be 4 floats that resize only H and W");
            // iostune's source coordinates use in/out: exact when the output size is in * scale.
            auto exact = [&](int in, float scale) {
                const double out = double(in) * double(scale);
                if (!(std::abs(out - std::round(out)) <= 1e-6) || !(out >= 1))
                    throw fail(node, fmt::format("scale {} of a size-{} axis gives no whole output "
                                                 "size; iostune resizes to whole sizes only",
                                                 scale, in));
                if (out > double(kMaxDimension))
                    throw fail(node, fmt::format("scale {} of a size-{} axis gives {}, more than "
                                                 "the {} iostune supports",
                                                 scale, in, out, kMaxDimension));
                return int(std::lround(out));
            };
            a.out_h = exact(s.h, t.floats[2]);
            a.out_w = exact(s.w, t.floats[3]);
        } else {
            throw fail(node, "neither scales nor sizes is given");
        }
        define_op(node, draft_.add(OpKind::Resize, a, {x.id}, op_name(node), {}));
    }

    // Shape of a computed tensor: its static dims (the batch as imported), a constant.
    void shape_node(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = input(node, 0);
        const Shape s = draft_.shape(x.id);
        std::vector<int64_t> dims;
        switch (x.form) {
            case Value::Form::Tensor: dims = {s.n, s.c, s.h, s.w}; break;
            case Value::Form::Flat: dims = {s.n, int64_t(s.c) * s.h * s.w}; break;
            case Value::Form::ChannelsLast: dims = {s.n, s.h, s.w, s.c}; break;
            case Value::Form::Padded:
                dims = {s.n, s.c, s.h + x.pads[0] + x.pads[2], s.w + x.pads[1] + x.pads[3]};
                break;
            case Value::Form::Grouped: dims = {s.n, x.groups, s.c / x.groups, s.h, s.w}; break;
            case Value::Form::Shuffled: dims = {s.n, s.c / x.groups, x.groups, s.h, s.w}; break;
            case Value::Form::View: dims = x.view.logical(); break;
            default: throw fail(node, "the shape of this value is not known to iostune");
        }
        const int64_t rank = int64_t(dims.size());
        int64_t start = attrs.get_int("start", 0), end = attrs.get_int("end", rank);
        start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
        end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
        ConstTensor t;
        t.name = node.output(0);
        t.is_float = false;
        t.ints.assign(dims.begin() + start, dims.begin() + std::max(start, end));
        t.dims = {int64_t(t.ints.size())};
        define(node, 0, constant(std::move(t)));
    }

    void conv_transpose(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = activation(node, 0);
        const Shape in = draft_.shape(x.id);
        const ConstTensor& w = constant_input(node, 1, "weight");
        const int64_t group = attrs.get_size("group", 1);
        if (w.dims.size() != 4 || !w.is_float || group <= 0 || w.dims[0] != in.c ||
            in.c % group != 0)
            throw fail(node, fmt::format("weight shape [{}] and group {} do not fit an input with "
                                         "{} channels (2-D, float weights [C, M/group, kH, kW])",
                                         fmt::join(w.dims, ", "), group, in.c));
        if (attrs.get_string("auto_pad", "NOTSET") != "NOTSET")
            throw fail(node, "auto_pad is not supported; give explicit pads");
        const auto strides = attrs.get_sizes("strides", {1, 1});
        const auto dilations = attrs.get_sizes("dilations", {1, 1});
        const auto pads = attrs.get_sizes("pads", {0, 0, 0, 0});
        const auto output_padding = attrs.get_sizes("output_padding", {0, 0});
        if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 ||
            output_padding.size() != 2)
            throw fail(node, "only 2-D transposed convolutions (NCHW inputs) are supported");
        if (pads[0] != pads[2] || pads[1] != pads[3])
            throw fail(node, fmt::format("asymmetric pads [{}] are not supported",
                                         fmt::join(pads, ", ")));
        const int64_t out_channels = w.dims[1] * group;  // each factor below 2^31: no wrap
        if (out_channels > kMaxDimension)
            throw fail(node, fmt::format("weight shape [{}] and group {} give {} output channels, "
                                         "more than the {} iostune supports",
                                         fmt::join(w.dims, ", "), group, out_channels,
                                         kMaxDimension));
        const auto kernel = attrs.get_sizes("kernel_shape", {w.dims[2], w.dims[3]});
        if (kernel != std::vector<int64_t>{w.dims[2], w.dims[3]})
            throw fail(node, fmt::format("kernel_shape [{}] disagrees with the weight shape [{}]",
                                         fmt::join(kernel, ", "), fmt::join(w.dims, ", ")));
        ConvTransposeAttrs a;
        a.out_channels = int(out_channels);
        a.kernel_h = int(w.dims[2]);
        a.kernel_w = int(w.dims[3]);
        a.stride_h = int(strides[0]);
        a.stride_w = int(strides[1]);
        a.pad_h = int(pads[0]);
        a.pad_w = int(pads[1]);
        a.output_padding_h = int(output_padding[0]);
        a.output_padding_w = int(output_padding[1]);
        a.dilation_h = int(dilations[0]);
        a.dilation_w = int(dilations[1]);
        a.groups = int(group);
        a.bias = has_input(node, 2);
        std::vector<ParamTensor> params = filter_and_bias(node, w, a.out_channels, a.bias);
        const int id = draft_.add(OpKind::ConvTranspose, a, {x.id}, op_name(node), std::move(params));
        if (attrs.has("output_shape")) {
            const auto shape = attrs.get_ints("output_shape", {});
            const Shape out = draft_.shape(id);
            const std::vector<int64_t> spatial(shape.end() - std::min<size_t>(2, shape.size()),
                                               shape.end());
            if (spatial != std::vector<int64_t>{out.h, out.w})
                throw fail(node, fmt::format("output_shape [{}] differs from the {}x{} the pads "
                                             "give; re-export with explicit pads",
                                             fmt::join(shape, ", "), out.h, out.w));
        }
        define_op(node, id);
    }

    void softmax(const onnx::NodeProto& node) {
        if (view_softmax(node)) return;
        const NodeAttributes attrs(node, where(node));
        const Value& x = unpadded_input(node, 0);
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
            if (training.elements() != 1) throw fail(node, "training_mode must be a scalar");
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

    // ---- PReLU, instance and group norm, pixel (un)shuffle, stepped slices ----

    // A per-channel slope: a prelu op; one slope for every channel: a leaky ReLU (exact, and it
    // fuses into the convolution before it like the other activations).
    void prelu(const onnx::NodeProto& node) {
        const Value& x = pointwise_input(node, 0);
        std::vector<float> slope = per_channel_constant(node, 1, x);
        if (std::all_of(slope.begin(), slope.end(), [&](float v) { return v == slope[0]; })) {
            unary(node, OpKind::Activation,
                  ActivationAttrs{ActivationFunction::LeakyRelu, slope[0], 0.0f});
            return;
        }
        std::vector<ParamTensor> params;
        params.push_back({{int(slope.size())}, std::move(slope)});
        define_op(node, draft_.add(OpKind::PRelu, PReluAttrs{}, {x.id}, op_name(node),
                                   std::move(params)),
                  x.form);
    }

    // InstanceNormalization normalises each (image, index of axis 1) over the other axes: over an
    // NCHW tensor each channel (a group_norm op with a group per channel); over GroupNorm's
    // [N, G, -1] view (PyTorch's export of nn.GroupNorm) each group of C / G channels.
    void instance_norm(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = unpadded_input(node, 0);
        const std::optional<ViewShape> view = view_of(x);
        const Shape s = draft_.shape(x.id);
        const std::optional<int> groups =
            view && view->dims.size() >= 3 ? channel_branches(s, *view) : std::nullopt;
        if (!groups)
            throw fail(node, "InstanceNormalization needs an NCHW tensor, or its view [N, G, ...] "
                             "with G dividing the channels (GroupNorm as PyTorch exports it)");
        const std::vector<float>& scale = float_input(node, 1, "scale", size_t(*groups));
        const std::vector<float>& bias = float_input(node, 2, "bias", size_t(*groups));
        std::vector<float> gamma(size_t(s.c)), beta(size_t(s.c));
        const int per_group = s.c / *groups;
        for (int c = 0; c < s.c; ++c) {
            gamma[size_t(c)] = scale[size_t(c / per_group)];
            beta[size_t(c)] = bias[size_t(c / per_group)];
        }
        std::vector<ParamTensor> params;
        params.push_back({{s.c}, std::move(gamma)});
        params.push_back({{s.c}, std::move(beta)});
        const GroupNormAttrs a{*groups, attrs.get_float("epsilon", 1e-5f)};
        const int id = draft_.add(OpKind::GroupNorm, a, {x.id}, op_name(node), std::move(params));
        define(node, 0, view_value(node, id, *view));
    }

    void depth_space(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = activation(node, 0);
        const int64_t block = attrs.get_int("blocksize", 0);
        if (block < 1 || block > std::numeric_limits<int>::max())
            throw fail(node, fmt::format("blocksize {} must be a positive int", block));
        DepthSpaceAttrs a{int(block), BlockOrder::Dcr};
        const bool to_space = node.op_type() == "DepthToSpace";
        if (to_space) {
            const std::string mode = attrs.get_string("mode", "DCR");
            if (mode == "CRD") a.order = BlockOrder::Crd;
            else if (mode != "DCR")
                throw fail(node, fmt::format("mode '{}' is not DCR or CRD", mode));
        }
        const OpKind kind = to_space ? OpKind::DepthToSpace : OpKind::SpaceToDepth;
        define_op(node, draft_.add(kind, a, {x.id}, op_name(node), {}));
    }

    // A Slice with a step other than 1 along C, H or W (YOLO's Focus: x[..., ::2, ::2]): a
    // strided_slice op, one for a strided slice of a strided slice. False for step-1 slices,
    // which slice() makes channel slices and crops.
    bool stepped_slice(const onnx::NodeProto& node) {
        if (!has_input(node, 4)) return false;
        const std::vector<int64_t>& steps = constant_input(node, 4, "steps").ints;
        if (std::all_of(steps.begin(), steps.end(), [](int64_t v) { return v == 1; })) return false;
        const Value& x = activation(node, 0);
        std::vector<int64_t> axes;
        if (has_input(node, 3)) axes = constant_input(node, 3, "axes").ints;
        std::optional<StridedSliceAttrs> a = strided_slice_of(
            draft_.shape(x.id), constant_input(node, 1, "starts").ints,
            constant_input(node, 2, "ends").ints, axes, steps, where(node));
        if (!a) throw fail(node, "the slice is empty; iostune needs at least one element");
        int source = x.id;
        if (source != kGraphInput && draft_.op(source).kind == OpKind::StridedSlice) {
            a = composed(std::get<StridedSliceAttrs>(draft_.op(source).attrs), *a);
            source = draft_.op(source).inputs.at(0);
        }
        define_op(node, draft_.add(OpKind::StridedSlice, *a, {source}, op_name(node), {}));
        return true;
    }

    // ---- reshaped views: split attention, group norm, pixel (un)shuffle, flattened heads ----

    // What a value is of its op's tensor, for the forms that are views of it (value_views.h).
    std::optional<ViewShape> view_of(const Value& v) const {
        const Shape s = draft_.shape(v.id);
        const int64_t features = int64_t(s.c) * s.h * s.w;
        switch (v.form) {
            case Value::Form::Tensor: return ViewShape{{s.n, s.c, s.h, s.w}, {}};
            case Value::Form::Flat: return ViewShape{{s.n, features}, {}};
            case Value::Form::Grouped:
                return ViewShape{{s.n, v.groups, s.c / v.groups, s.h, s.w}, {}};
            case Value::Form::Shuffled:
                return ViewShape{{s.n, v.groups, s.c / v.groups, s.h, s.w}, {0, 2, 1, 3, 4}};
            case Value::Form::View: return v.view;
            default: return std::nullopt;
        }
    }

    static bool is_view(const Value& v) {
        return v.form == Value::Form::View || v.form == Value::Form::Grouped ||
               v.form == Value::Form::Shuffled;
    }

    // `view` of op `id`'s tensor as the value that names it: the tensor itself, flattened, a
    // channel-group view (Grouped, Shuffled) or a View. A flattened map read as [N, C*H*W, 1, 1]
    // is its flatten op.
    Value view_value(const onnx::NodeProto& node, int id, ViewShape view) {
        view = normalized(std::move(view));
        const Shape s = draft_.shape(id);
        const std::vector<int64_t>& d = view.dims;
        const int64_t features = int64_t(s.c) * s.h * s.w;
        const bool grouped = d.size() == 5 && d[0] == s.n && d[1] >= 1 && d[1] * d[2] == s.c &&
                             d[3] == s.h && d[4] == s.w;
        Value v;
        v.id = id;
        if (!view.transposed()) {
            if (d == std::vector<int64_t>{s.n, s.c, s.h, s.w}) return v;
            if (d == std::vector<int64_t>{s.n, features}) {
                v.form = Value::Form::Flat;
                return v;
            }
            if (d == std::vector<int64_t>{s.n, features, 1, 1}) {
                v.id = flattened(node, id);
                return v;
            }
            if (grouped) {
                v.form = Value::Form::Grouped;
                v.groups = int(d[1]);
                return v;
            }
        } else if (grouped && view.perm == std::vector<int64_t>{0, 2, 1, 3, 4}) {
            v.form = Value::Form::Shuffled;
            v.groups = int(d[1]);
            return v;
        }
        v.form = Value::Form::View;
        v.view = std::move(view);
        return v;
    }

    // Op `id`'s map as a vector [N, C*H*W, 1, 1] (one flatten op per map, shared by its readers).
    int flattened(const onnx::NodeProto& node, int id) {
        const Shape s = draft_.shape(id);
        if (s.h == 1 && s.w == 1) return id;
        auto [it, fresh] = flattened_.try_emplace(id, kGraphInput);
        if (fresh)
            it->second = draft_.add(OpKind::Flatten, FlattenAttrs{}, {id},
                                    fmt::format("{}:flatten", op_name(node)), {});
        return it->second;
    }

    // A ChannelAffine map y = factor * x over op `id`'s tensor.
    int scaled(const onnx::NodeProto& node, int id, float factor) {
        const int c = draft_.shape(id).c;
        std::vector<ParamTensor> params;
        params.push_back({{c}, std::vector<float>(size_t(c), factor)});
        params.push_back({{c}, std::vector<float>(size_t(c), 0.0f)});
        return draft_.add(OpKind::ChannelAffine, ChannelAffineAttrs{}, {id},
                          fmt::format("{}:scale", op_name(node)), std::move(params));
    }

    // Reshape of a tensor, a flattened tensor or a view: a view of the same tensor; of a
    // PixelShuffle / PixelUnshuffle view (6-D, transposed): its depth_to_space / space_to_depth
    // op, viewed as the target. False for a channel shuffle's view (shuffle_reshape()).
    bool view_reshape(const onnx::NodeProto& node) {
        const Value& x = unpadded_input(node, 0);
        if (x.form == Value::Form::Shuffled) return false;
        const std::optional<ViewShape> view = view_of(x);
        if (!view) return false;
        const ConstTensor& shape = constant_input(node, 1, "shape");
        if (shape.is_float) return false;
        const bool allow_zero = NodeAttributes(node, where(node)).get_int("allowzero", 0) != 0;
        const std::vector<int64_t> dims = view->logical();
        const auto target = reshape_target(shape.ints, dims, allow_zero, draft_.shape(x.id).n);
        if (!target)
            throw fail(node, fmt::format("reshaping [{}] to [{}]: the element counts differ",
                                         fmt::join(dims, ", "), fmt::join(shape.ints, ", ")));
        int id = x.id;
        if (view->transposed()) {
            const std::optional<DepthSpaceMatch> match = match_depth_space(draft_.shape(id), *view);
            if (!match)
                throw fail(node, fmt::format("reshaping the transposed view [{}] (of [{}], perm "
                                             "[{}]) is not supported; iostune reads transposed "
                                             "views as channel shuffles, PixelShuffle and "
                                             "PixelUnshuffle (6-D, DCR or CRD) and split "
                                             "attention's softmax",
                                             fmt::join(dims, ", "), fmt::join(view->dims, ", "),
                                             fmt::join(view->perm, ", ")));
            id = draft_.add(match->kind, match->attrs, {id}, op_name(node), {});
        }
        define(node, 0, view_value(node, id, ViewShape{*target, {}}));
        return true;
    }

    // Transpose of a view: the same tensor read in another order. False for the NCHW <-> NHWC
    // transposes of transpose().
    bool view_transpose(const onnx::NodeProto& node) {
        const Value& x = input(node, 0);
        if (!is_view(x)) return false;
        const ViewShape view = *view_of(x);
        std::vector<int64_t> perm = NodeAttributes(node, where(node)).get_ints("perm", {});
        if (perm.empty())  // ONNX's default: the axes reversed
            for (size_t i = view.dims.size(); i > 0; --i) perm.push_back(int64_t(i - 1));
        const std::optional<ViewShape> t = transposed(view, perm);
        if (!t)
            throw fail(node, fmt::format("perm [{}] is not a permutation of the view's {} axes",
                                         fmt::join(perm, ", "), view.dims.size()));
        define(node, 0, view_value(node, x.id, *t));
        return true;
    }

    // Softmax across the branches of a split-attention view (ResNeSt's [N, cardinality, radix,
    // r] transposed, SKNet's [N, radix, C / radix, H, W]): a radix_softmax op.
    bool view_softmax(const onnx::NodeProto& node) {
        const Value& x = input(node, 0);
        if (!is_view(x)) return false;
        const ViewShape view = *view_of(x);
        const std::vector<int64_t> dims = view.logical();
        const int rank = int(dims.size());
        int64_t axis = NodeAttributes(node, where(node)).get_int("axis", opset_ < 13 ? 1 : -1);
        if (axis < 0) axis += rank;
        // Before opset 13 Softmax normalises over every axis from `axis` on: one axis where the
        // rest are 1.
        bool one_axis = axis >= 1 && axis < rank;
        for (int64_t i = axis + 1; opset_ < 13 && one_axis && i < rank; ++i)
            one_axis = dims[size_t(i)] == 1;
        const std::optional<RadixSoftmaxPlan> plan =
            one_axis ? plan_radix_softmax(draft_.shape(x.id), view, int(axis)) : std::nullopt;
        if (!plan)
            throw fail(node, fmt::format("softmax along axis {} of the view [{}] is not "
                                         "supported; iostune takes a softmax across split "
                                         "attention's branches (ResNeSt, SKNet)",
                                         axis, fmt::join(dims, ", ")));
        const int id = draft_.add(OpKind::RadixSoftmax, plan->attrs, {x.id}, op_name(node), {});
        define(node, 0, view_value(node, id, plan->result));
        return true;
    }

    // ReduceSum / ReduceMean over axis 1 of a view whose axis 1 splits the channels into branches
    // (split attention's weighted sum): an add of the branches' channel slices.
    bool view_reduce(const onnx::NodeProto& node) {
        const Value& x = input(node, 0);
        if (!is_view(x)) return false;
        const NodeAttributes attrs(node, where(node));
        const ViewShape view = *view_of(x);
        const int64_t rank = int64_t(view.dims.size());
        std::vector<int64_t> axes = attrs.get_ints("axes", {});
        if (has_input(node, 1)) axes = constant_input(node, 1, "axes").ints;
        const Shape s = draft_.shape(x.id);
        const std::optional<int> branches = channel_branches(s, view);
        const bool sum = node.op_type() == "ReduceSum", mean = node.op_type() == "ReduceMean";
        if (axes.size() != 1 || (axes[0] != 1 && axes[0] != 1 - rank) || !branches ||
            !(sum || mean))
            throw fail(node, fmt::format("{} over axes [{}] of the view [{}] is not supported; "
                                         "iostune sums or averages split attention's branches "
                                         "(axis 1 of [N, radix, C / radix, ...])",
                                         node.op_type(), fmt::join(axes, ", "),
                                         fmt::join(view.logical(), ", ")));
        int id = x.id;
        if (*branches > 1) {
            std::vector<int> slices;
            const int width = s.c / *branches;
            for (int k = 0; k < *branches; ++k)
                slices.push_back(draft_.add(OpKind::ChannelSlice,
                                            ChannelSliceAttrs{k * width, (k + 1) * width}, {x.id},
                                            fmt::format("{}:branch{}", op_name(node), k), {}));
            id = draft_.add(OpKind::Add, AddAttrs{}, slices, op_name(node), {});
            if (mean) id = scaled(node, id, 1.0f / float(*branches));
        }
        std::vector<int64_t> dims = view.dims;
        if (attrs.get_int("keepdims", 1) != 0) dims[1] = 1;
        else dims.erase(dims.begin() + 1);
        define(node, 0, view_value(node, id, ViewShape{dims, {}}));
        return true;
    }

    // Arithmetic on views that split their tensors' channels alike (x * attention over
    // [N, radix, C, H, W] and [N, radix, C, 1, 1]): the op on the tensors, broadcasting over H
    // and W; and a view with a scalar constant: an affine map.
    bool view_arithmetic(const onnx::NodeProto& node) {
        if (node.input_size() != 2) return false;
        const Value& a = input(node, 0);
        const Value& b = input(node, 1);
        if (!is_view(a) && !is_view(b)) return false;
        const std::string& op = node.op_type();
        if (a.form == Value::Form::Constant || b.form == Value::Form::Constant) {
            view_scalar_arithmetic(node, a.form == Value::Form::Constant);
            return true;
        }
        const std::optional<ViewShape> va = view_of(a), vb = view_of(b);
        const Shape sa = draft_.shape(a.id), sb = draft_.shape(b.id);
        const auto spatial_last = [](const ViewShape& v, const Shape& s) {
            const auto& d = v.dims;
            return d.size() >= 3 && d[d.size() - 2] == s.h && d[d.size() - 1] == s.w;
        };
        const bool aligned =
            va && vb && !va->transposed() && !vb->transposed() &&
            va->dims.size() == vb->dims.size() && spatial_last(*va, sa) && spatial_last(*vb, sb) &&
            std::equal(va->dims.begin(), va->dims.end() - 2, vb->dims.begin());
        if (!aligned)
            throw fail(node, "the operands are views of tensors that split the channels "
                             "differently (or transposed); iostune takes arithmetic between "
                             "views [N, g, C / g, H, W] of the same split, broadcast over H and W");
        std::vector<int64_t> dims = va->dims;
        dims[dims.size() - 2] = std::max(sa.h, sb.h);
        dims[dims.size() - 1] = std::max(sa.w, sb.w);
        static const std::map<std::string, BinaryOp> ops = {
            {"Add", BinaryOp::Add}, {"Sub", BinaryOp::Sub}, {"Mul", BinaryOp::Mul},
            {"Div", BinaryOp::Div}};
        const int id = op == "Add" && sa == sb
                           ? draft_.add(OpKind::Add, AddAttrs{}, {a.id, b.id}, op_name(node), {})
                           : draft_.add(OpKind::Binary, BinaryAttrs{ops.at(op)}, {a.id, b.id},
                                        op_name(node), {});
        define(node, 0, view_value(node, id, ViewShape{dims, {}}));
        return true;
    }

    // A view (input 1 - constant_index) with a scalar constant: an affine map of its tensor.
    void view_scalar_arithmetic(const onnx::NodeProto& node, int constant_index) {
        const std::string& op = node.op_type();
        const Value& x = input(node, 1 - constant_index);
        const ConstTensor& c = constant_input(node, constant_index, "constant operand");
        if (c.elements() != 1 || (op == "Div" && constant_index == 0))
            throw fail(node, fmt::format("{} of a view and the constant [{}]: iostune takes a "
                                         "scalar constant (and no division by a view)",
                                         op, fmt::join(c.dims, ", ")));
        const float v = c.is_float ? c.floats.at(0) : float(c.ints.at(0));
        float scale = 1.0f, shift = 0.0f;
        if (op == "Add") shift = v;
        else if (op == "Sub") constant_index == 0 ? (scale = -1.0f, shift = v) : (shift = -v);
        else if (op == "Mul") scale = v;
        else scale = 1.0f / v;
        const int channels = draft_.shape(x.id).c;
        std::vector<ParamTensor> params;
        params.push_back({{channels}, std::vector<float>(size_t(channels), scale)});
        params.push_back({{channels}, std::vector<float>(size_t(channels), shift)});
        const int id = draft_.add(OpKind::ChannelAffine, ChannelAffineAttrs{}, {x.id},
                                  op_name(node), std::move(params));
        define(node, 0, view_value(node, id, *view_of(x)));
    }

    // Concat of flattened tensors (a multi-scale head's pooled vectors): their vectors
    // concatenated; along axis 1 of views [N, g_k, C, H, W] (SKNet's torch.stack of its paths):
    // the tensors concatenated, a view of g = sum g_k. False for NCHW inputs (concat()).
    bool view_concat(const onnx::NodeProto& node) {
        if (node.input_size() < 1) return false;
        const Value& first = input(node, 0);
        if (first.form != Value::Form::Flat && !is_view(first)) return false;
        const std::optional<ViewShape> view = view_of(first);
        const int64_t rank = int64_t(view->dims.size());
        int64_t axis = NodeAttributes(node, where(node)).get_int("axis", 1);
        if (axis < 0) axis += rank;
        std::vector<int> inputs;
        std::vector<int64_t> dims = view->dims;
        dims[1] = 0;
        for (int i = 0; i < node.input_size(); ++i) {
            const Value& v = input(node, i);
            const std::optional<ViewShape> vi = view_of(v);
            const Shape s = vi ? draft_.shape(v.id) : Shape{};
            const auto& d = vi ? vi->dims : std::vector<int64_t>{};
            const bool fits =
                axis == 1 && vi && !vi->transposed() && int64_t(d.size()) == rank &&
                (first.form == Value::Form::Flat
                     ? v.form == Value::Form::Flat
                     : rank >= 3 && std::equal(d.begin() + 2, d.end(), view->dims.begin() + 2) &&
                           d[d.size() - 2] == s.h && d[d.size() - 1] == s.w);
            if (!fits)
                throw fail(node, fmt::format("input '{}' cannot join the concatenation: iostune "
                                             "concatenates flattened [N, features] tensors along "
                                             "axis 1 and views [N, g, C, H, W] of one C, H and W "
                                             "along axis 1",
                                             node.input(i)));
            inputs.push_back(first.form == Value::Form::Flat ? flattened(node, v.id) : v.id);
            dims[1] += d[1];
        }
        const int id = draft_.add(OpKind::Concat, ConcatAttrs{}, inputs, op_name(node), {});
        define(node, 0, view_value(node, id, ViewShape{dims, {}}));
        return true;
    }

    // Flatten of a view at axis 1: the flattened tensor under it (the view reads it in order).
    bool view_flatten(const onnx::NodeProto& node) {
        const Value& x = input(node, 0);
        if (!is_view(x)) return false;
        const ViewShape view = *view_of(x);
        const int64_t rank = int64_t(view.dims.size());
        int64_t axis = NodeAttributes(node, where(node)).get_int("axis", 1);
        if (axis < 0) axis += rank;
        if (axis != 1 || view.transposed())
            throw fail(node, fmt::format("flattening the view [{}] at axis {} is not supported "
                                         "(only a view in its tensor's order, at axis 1)",
                                         fmt::join(view.logical(), ", "), axis));
        const Shape s = draft_.shape(x.id);
        define(node, 0, view_value(node, x.id, ViewShape{{s.n, int64_t(s.c) * s.h * s.w}, {}}));
        return true;
    }

    // Unsqueeze and Squeeze of a computed tensor (constants are folded): the same tensor with
    // axes of size 1 added or removed (torch.stack's Unsqueeze, a head's squeeze(-1)).
    void squeeze(const onnx::NodeProto& node) {
        const NodeAttributes attrs(node, where(node));
        const Value& x = unpadded_input(node, 0);
        const std::optional<ViewShape> view = view_of(x);
        if (!view || view->transposed())
            throw fail(node, "iostune squeezes and unsqueezes NCHW tensors, flattened tensors and "
                             "their reshaped views");
        std::vector<int64_t> axes = attrs.get_ints("axes", {});
        if (has_input(node, 1)) axes = constant_input(node, 1, "axes").ints;
        std::vector<int64_t> dims = view->dims;
        const bool unsqueeze = node.op_type() == "Unsqueeze";
        const int64_t rank = int64_t(dims.size()) + (unsqueeze ? int64_t(axes.size()) : 0);
        for (int64_t& a : axes) a = a < 0 ? a + rank : a;
        std::sort(axes.begin(), axes.end());
        const bool valid = !axes.empty() && axes.front() >= 1 && axes.back() < rank &&
                           std::adjacent_find(axes.begin(), axes.end()) == axes.end();
        if (!valid)
            throw fail(node, fmt::format("axes [{}] are not distinct axes of a rank-{} tensor past "
                                         "the batch",
                                         fmt::join(axes, ", "), rank));
        if (unsqueeze) {
            for (int64_t a : axes) dims.insert(dims.begin() + a, 1);
        } else {
            for (auto a = axes.rbegin(); a != axes.rend(); ++a) {
                if (dims[size_t(*a)] != 1)
                    throw fail(node,
                               fmt::format("axis {} has size {}, not 1", *a, dims[size_t(*a)]));
                dims.erase(dims.begin() + *a);
            }
        }
        define(node, 0, view_value(node, x.id, ViewShape{dims, {}}));
    }

    const onnx::GraphProto& graph_;
    int opset_;
    std::string source_;
    DraftGraph draft_;
    std::unordered_map<std::string, Value> values_;
    std::unordered_map<std::string, int> uses_;
    std::map<std::pair<int, std::array<int64_t, 4>>, int> settled_pads_;  // (input, pads) -> op
    std::map<int, int> flattened_;  // op -> its flatten op
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
        throw Error(fmt::format("{}: input {} must be a float32 tensor", source,
                                quoted_name(in.name())));
    const auto& dims = in.type().tensor_type().shape().dim();
    if (dims.size() != 4)
        throw Error(
            fmt::format("{}: input {} has rank {}; iostune needs an NCHW image tensor "
                        "(rank 4)",
                        source, quoted_name(in.name()), dims.size()));
    static constexpr const char* kAxisNames[] = {"batch", "channel", "height", "width"};
    std::array<int64_t, 4> size{};
    for (int axis = 0; axis < 4; ++axis) {
        const auto& d = dims[axis];
        if (d.has_dim_value() && d.dim_value() <= 0) {
            // Written as a number, not left symbolic: an empty or negative size, not a free one.
            throw Error(fmt::format("{}: input {} has a {} of {}; a dimension must be positive "
                                    "(or symbolic, a dim_param)",
                                    source, quoted_name(in.name()), kAxisNames[axis],
                                    d.dim_value()));
        } else if (d.has_dim_value()) {
            size[size_t(axis)] = d.dim_value();
        } else if (axis == 0) {
            size[0] = batch;  // symbolic batch: bound by the caller
        } else {
            throw Error(fmt::format(
                "{}: input {} has a dynamic {} dimension{}; iostune needs fixed channel and "
                "spatial sizes (only the batch may be symbolic). Re-export the model with a "
                "fixed image size (no dynamic_axes on H/W)",
                source, quoted_name(in.name()), kAxisNames[axis],
                d.has_dim_param() ? fmt::format(" ({})", quoted_name(d.dim_param()))
                                  : std::string()));
        }
    }
    // The sizes as the file gives them: one a Shape cannot hold is refused, never cut to int.
    if (const auto problem = tensor_size_problem({size.begin(), size.end()}))
        throw Error(fmt::format("{}: input {} of shape {}: {}", source, quoted_name(in.name()),
                                fmt::join(size, "x"), *problem));
    return {in.name(), Shape{int(size[0]), int(size[1]), int(size[2]), int(size[3])}};
}

// iostune's outputs are float32: an output the file declares as another type (INT64, STRING, a
// sequence) promises what iostune would not deliver. An undeclared type is taken as float.
void check_output_types(const onnx::GraphProto& graph, const std::string& source) {
    for (const auto& output : graph.output()) {
        if (!output.has_type()) continue;
        const auto& type = output.type();
        const bool float_tensor =
            type.has_tensor_type() &&
            (type.tensor_type().elem_type() == onnx::TensorProto::FLOAT ||
             type.tensor_type().elem_type() == onnx::TensorProto::UNDEFINED);
        if (float_tensor || type.value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
        const int elem = type.tensor_type().elem_type();
        const std::string declared =
            !type.has_tensor_type() ? std::string("as something other than a tensor")
            : onnx::TensorProto::DataType_IsValid(elem)
                ? onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(elem))
                : fmt::format("of element type {}", elem);
        throw Error(fmt::format("{}: the graph output {} is declared {}; iostune computes float32 "
                                "tensors only",
                                source, quoted_name(output.name()), declared));
    }
}

}  // namespace

Graph convert_model(const onnx::ModelProto& model, int opset, const std::string& source,
                    const OnnxImportOptions& options) {
    const onnx::GraphProto& graph = model.graph();
    if (graph.output_size() < 1)
        throw Error(fmt::format("{}: the graph has no outputs", source));
    check_output_types(graph, source);
    auto [input_name, input_shape] = graph_input(graph, source, options.batch);
    Converter converter(graph, opset, source, input_shape, input_name);
    return converter.run(options.name);
}

}  // namespace iostune::onnx_import
