// The attribute fields of every operator kind, named once: the JSON model format, its importer
// and the structural fingerprint all walk the same list, so a field added to an attribute
// struct in src/graph.h needs one line here and reaches all three.
// A field is an int, bool, float, attribute enum or an optional nested attribute struct (a
// convolution's fused activation: an object in the JSON format, absent when unset).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "src/graph.h"

namespace iostune {

// The enums that attribute fields use, written by name (to_string in src/graph.h).
template <class T>
constexpr bool is_attr_enum_v = std::is_same_v<T, ActivationFunction> ||
                                std::is_same_v<T, BinaryOp> || std::is_same_v<T, ResizeMode> ||
                                std::is_same_v<T, BlockOrder>;

template <class E>
constexpr int attr_enum_count() {
    if constexpr (std::is_same_v<E, ActivationFunction>) return kActivationFunctionCount;
    if constexpr (std::is_same_v<E, BinaryOp>) return kBinaryOpCount;
    if constexpr (std::is_same_v<E, ResizeMode>) return kResizeModeCount;
    if constexpr (std::is_same_v<E, BlockOrder>) return kBlockOrderCount;
}

// The enum value named `name`, if any.
template <class E>
std::optional<E> attr_enum_from_string(const std::string& name) {
    for (int i = 0; i < attr_enum_count<E>(); ++i)
        if (name == to_string(E(i))) return E(i);
    return std::nullopt;
}

// All names of an attribute enum, for error messages.
template <class E>
std::vector<std::string> attr_enum_names() {
    std::vector<std::string> names;
    for (int i = 0; i < attr_enum_count<E>(); ++i) names.emplace_back(to_string(E(i)));
    return names;
}

// Whether an attribute field is an optional nested attribute struct (ConvAttrs::activation).
template <class T>
constexpr bool is_nested_attrs_v = std::is_same_v<T, std::optional<ActivationAttrs>>;

// Calls f(name, field) for each field of `attrs` (an attribute struct of src/graph.h, const or
// not), in declaration order.
template <class Attrs, class F>
void for_each_attr_field(Attrs& attrs, F&& f) {
    using A = std::remove_const_t<Attrs>;
    if constexpr (std::is_same_v<A, ConvAttrs>) {
        f("out_channels", attrs.out_channels);
        f("kernel_h", attrs.kernel_h);
        f("kernel_w", attrs.kernel_w);
        f("stride_h", attrs.stride_h);
        f("stride_w", attrs.stride_w);
        f("pad_h", attrs.pad_h);
        f("pad_w", attrs.pad_w);
        f("dilation_h", attrs.dilation_h);
        f("dilation_w", attrs.dilation_w);
        f("groups", attrs.groups);
        f("bias", attrs.bias);
        f("relu", attrs.relu);
        f("residual", attrs.residual);
        f("activation", attrs.activation);
        f("prelu", attrs.prelu);
    } else if constexpr (std::is_same_v<A, SepConvAttrs>) {
        f("out_channels", attrs.out_channels);
        f("kernel", attrs.kernel);
        f("stride", attrs.stride);
        f("pad", attrs.pad);
        f("dilation", attrs.dilation);
        f("pre_relu", attrs.pre_relu);
        f("bias", attrs.bias);
        f("post_relu", attrs.post_relu);
    } else if constexpr (std::is_same_v<A, PoolAttrs>) {
        f("kernel_h", attrs.kernel_h);
        f("kernel_w", attrs.kernel_w);
        f("stride_h", attrs.stride_h);
        f("stride_w", attrs.stride_w);
        f("pad_h", attrs.pad_h);
        f("pad_w", attrs.pad_w);
        f("ceil_mode", attrs.ceil_mode);
        f("count_include_pad", attrs.count_include_pad);
        f("global", attrs.global);
    } else if constexpr (std::is_same_v<A, AddAttrs>) {
        f("relu", attrs.relu);
    } else if constexpr (std::is_same_v<A, LinearAttrs>) {
        f("out_features", attrs.out_features);
        f("bias", attrs.bias);
    } else if constexpr (std::is_same_v<A, ActivationAttrs>) {
        f("function", attrs.function);
        f("alpha", attrs.alpha);
        f("beta", attrs.beta);
    } else if constexpr (std::is_same_v<A, BinaryAttrs>) {
        f("op", attrs.op);
    } else if constexpr (std::is_same_v<A, ChannelShuffleAttrs>) {
        f("groups", attrs.groups);
    } else if constexpr (std::is_same_v<A, ChannelSliceAttrs>) {
        f("begin", attrs.begin);
        f("end", attrs.end);
    } else if constexpr (std::is_same_v<A, ResizeAttrs>) {
        f("mode", attrs.mode);
        f("out_h", attrs.out_h);
        f("out_w", attrs.out_w);
        f("align_corners", attrs.align_corners);
    } else if constexpr (std::is_same_v<A, ConvTransposeAttrs>) {
        f("out_channels", attrs.out_channels);
        f("kernel_h", attrs.kernel_h);
        f("kernel_w", attrs.kernel_w);
        f("stride_h", attrs.stride_h);
        f("stride_w", attrs.stride_w);
        f("pad_h", attrs.pad_h);
        f("pad_w", attrs.pad_w);
        f("output_padding_h", attrs.output_padding_h);
        f("output_padding_w", attrs.output_padding_w);
        f("dilation_h", attrs.dilation_h);
        f("dilation_w", attrs.dilation_w);
        f("groups", attrs.groups);
        f("bias", attrs.bias);
    } else if constexpr (std::is_same_v<A, ChannelNormAttrs>) {
        f("eps", attrs.eps);
    } else if constexpr (std::is_same_v<A, SpatialPadAttrs>) {
        f("top", attrs.top);
        f("bottom", attrs.bottom);
        f("left", attrs.left);
        f("right", attrs.right);
    } else if constexpr (std::is_same_v<A, GroupNormAttrs>) {
        f("groups", attrs.groups);
        f("eps", attrs.eps);
    } else if constexpr (std::is_same_v<A, RadixSoftmaxAttrs>) {
        f("radix", attrs.radix);
        f("cardinality", attrs.cardinality);
    } else if constexpr (std::is_same_v<A, StridedSliceAttrs>) {
        f("c_begin", attrs.c_begin);
        f("c_step", attrs.c_step);
        f("c_count", attrs.c_count);
        f("h_begin", attrs.h_begin);
        f("h_step", attrs.h_step);
        f("h_count", attrs.h_count);
        f("w_begin", attrs.w_begin);
        f("w_step", attrs.w_step);
        f("w_count", attrs.w_count);
    } else if constexpr (std::is_same_v<A, DepthSpaceAttrs>) {
        f("block", attrs.block);
        f("order", attrs.order);
    } else {
        static_assert(std::is_same_v<A, ConcatAttrs> || std::is_same_v<A, ReluAttrs> ||
                          std::is_same_v<A, SoftmaxAttrs> || std::is_same_v<A, IdentityAttrs> ||
                          std::is_same_v<A, ChannelAffineAttrs> || std::is_same_v<A, PReluAttrs> ||
                          std::is_same_v<A, FlattenAttrs>,
                      "an attribute struct without a field list in src/attr_fields.h");
    }
}

// A field added after models and schedules were stored: a model file and the fingerprint leave
// it out while it is false (or unset), so older files read unchanged and keep their
// fingerprints (and so their stored schedules).
inline bool omitted_when_false(std::string_view field) {
    return field == "residual" || field == "prelu" || field == "post_relu";
}
template <class T>
bool omitted_field(std::string_view field, const T& value) {
    if constexpr (std::is_same_v<T, bool>) return !value && omitted_when_false(field);
    else if constexpr (is_nested_attrs_v<T>) return !value.has_value();
    else return false;
}

// Default-constructed attributes of the struct that `kind` uses.
inline OpAttrs default_attrs(OpKind kind) {
    switch (kind) {
        case OpKind::Conv: return ConvAttrs{};
        case OpKind::SepConv: return SepConvAttrs{};
        case OpKind::MaxPool:
        case OpKind::AvgPool: return PoolAttrs{};
        case OpKind::Concat: return ConcatAttrs{};
        case OpKind::Add: return AddAttrs{};
        case OpKind::Relu: return ReluAttrs{};
        case OpKind::Linear: return LinearAttrs{};
        case OpKind::Softmax: return SoftmaxAttrs{};
        case OpKind::Identity: return IdentityAttrs{};
        case OpKind::Activation: return ActivationAttrs{};
        case OpKind::Binary: return BinaryAttrs{};
        case OpKind::ChannelAffine: return ChannelAffineAttrs{};
        case OpKind::ChannelShuffle: return ChannelShuffleAttrs{};
        case OpKind::ChannelSlice: return ChannelSliceAttrs{};
        case OpKind::Resize: return ResizeAttrs{};
        case OpKind::ConvTranspose: return ConvTransposeAttrs{};
        case OpKind::ChannelNorm: return ChannelNormAttrs{};
        case OpKind::SpatialPad: return SpatialPadAttrs{};
        case OpKind::PRelu: return PReluAttrs{};
        case OpKind::GroupNorm: return GroupNormAttrs{};
        case OpKind::RadixSoftmax: return RadixSoftmaxAttrs{};
        case OpKind::StridedSlice: return StridedSliceAttrs{};
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth: return DepthSpaceAttrs{};
        case OpKind::Flatten: return FlattenAttrs{};
    }
    return IdentityAttrs{};
}

}  // namespace iostune
