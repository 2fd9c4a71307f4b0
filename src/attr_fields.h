// The attribute fields of every operator kind, named once: the JSON model format, its importer
// and the structural fingerprint all walk the same list, so a field added to an attribute
// struct in src/graph.h needs one line here and reaches all three.
#pragma once

#include <string_view>
#include <type_traits>

#include "src/graph.h"

namespace iostune {

// Calls f(name, field) for each field of `attrs` (an attribute struct of src/graph.h, const or
// not), in declaration order. Fields are int or bool.
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
    } else if constexpr (std::is_same_v<A, SepConvAttrs>) {
        f("out_channels", attrs.out_channels);
        f("kernel", attrs.kernel);
        f("stride", attrs.stride);
        f("pad", attrs.pad);
        f("dilation", attrs.dilation);
        f("pre_relu", attrs.pre_relu);
        f("bias", attrs.bias);
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
    } else {
        static_assert(std::is_same_v<A, ConcatAttrs> || std::is_same_v<A, ReluAttrs> ||
                          std::is_same_v<A, SoftmaxAttrs> || std::is_same_v<A, IdentityAttrs>,
                      "an attribute struct without a field list in src/attr_fields.h");
    }
}

// A field added after models and schedules were stored: a model file and the fingerprint leave
// it out while it is false, so older files read unchanged and keep their fingerprints (and so
// their stored schedules).
inline bool omitted_when_false(std::string_view field) { return field == "residual"; }

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
    }
    return IdentityAttrs{};
}

}  // namespace iostune
