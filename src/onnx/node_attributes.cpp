#include "src/onnx/node_attributes.h"

#include <fmt/format.h>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/quoted.h"
#include "src/shape_limits.h"

namespace iostune::onnx_import {

namespace {

const onnx::AttributeProto* find(const onnx::NodeProto& node, const std::string& name) {
    for (const auto& attribute : node.attribute())
        if (attribute.name() == name) return &attribute;
    return nullptr;
}

}  // namespace

NodeAttributes::NodeAttributes(const onnx::NodeProto& node, std::string where)
    : node_(node), where_(std::move(where)) {}

bool NodeAttributes::has(const std::string& name) const { return find(node_, name) != nullptr; }

int64_t NodeAttributes::get_int(const std::string& name, int64_t fallback) const {
    const auto* a = find(node_, name);
    if (!a) return fallback;
    if (a->type() != onnx::AttributeProto::INT)
        throw Error(fmt::format("{}: attribute {} should be an int", where_, quoted_name(name)));
    return a->i();
}

float NodeAttributes::get_float(const std::string& name, float fallback) const {
    const auto* a = find(node_, name);
    if (!a) return fallback;
    if (a->type() != onnx::AttributeProto::FLOAT)
        throw Error(fmt::format("{}: attribute {} should be a float", where_, quoted_name(name)));
    return a->f();
}

std::string NodeAttributes::get_string(const std::string& name, const std::string& fallback) const {
    const auto* a = find(node_, name);
    if (!a) return fallback;
    if (a->type() != onnx::AttributeProto::STRING)
        throw Error(fmt::format("{}: attribute {} should be a string", where_, quoted_name(name)));
    return a->s();
}

std::vector<int64_t> NodeAttributes::get_ints(const std::string& name,
                                              const std::vector<int64_t>& fallback) const {
    const auto* a = find(node_, name);
    if (!a) return fallback;
    if (a->type() != onnx::AttributeProto::INTS)
        throw Error(fmt::format("{}: attribute {} should be a list of ints", where_,
                                quoted_name(name)));
    return {a->ints().begin(), a->ints().end()};
}

void NodeAttributes::check_size(const std::string& name, int64_t value) const {
    if (value < -kMaxDimension || value > kMaxDimension)
        throw Error(fmt::format("{}: attribute {} holds {}, beyond the {} iostune supports for a "
                                "size, pad, stride or dilation",
                                where_, quoted_name(name), value, kMaxDimension));
}

int64_t NodeAttributes::get_size(const std::string& name, int64_t fallback) const {
    const int64_t value = get_int(name, fallback);
    check_size(name, value);
    return value;
}

std::vector<int64_t> NodeAttributes::get_sizes(const std::string& name,
                                               const std::vector<int64_t>& fallback) const {
    std::vector<int64_t> values = get_ints(name, fallback);
    for (int64_t value : values) check_size(name, value);
    return values;
}

std::optional<ConstTensor> NodeAttributes::get_tensor(const std::string& name) const {
    const auto* a = find(node_, name);
    if (!a) return std::nullopt;
    if (a->type() != onnx::AttributeProto::TENSOR)
        throw Error(fmt::format("{}: attribute {} should be a tensor", where_, quoted_name(name)));
    return decode_tensor(a->t(), where_);
}

}  // namespace iostune::onnx_import
