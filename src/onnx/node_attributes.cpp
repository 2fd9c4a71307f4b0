#include "src/onnx/node_attributes.h"

#include <fmt/format.h>

#include "onnx.pb.h"
#include "src/error.h"

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
        throw Error(fmt::format("{}: attribute '{}' should be an int", where_, name));
    return a->i();
}

float NodeAttributes::get_float(const std::string& name, float fallback) const {
    const auto* a = find(node_, name);
    if (!a) return fallback;
    if (a->type() != onnx::AttributeProto::FLOAT)
        throw Error(fmt::format("{}: attribute '{}' should be a float", where_, name));
    return a->f();
}

std::string NodeAttributes::get_string(const std::string& name, const std::string& fallback) const {
    const auto* a = find(node_, name);
    if (!a) return fallback;
    if (a->type() != onnx::AttributeProto::STRING)
        throw Error(fmt::format("{}: attribute '{}' should be a string", where_, name));
    return a->s();
}

std::vector<int64_t> NodeAttributes::get_ints(const std::string& name,
                                              const std::vector<int64_t>& fallback) const {
    const auto* a = find(node_, name);
    if (!a) return fallback;
    if (a->type() != onnx::AttributeProto::INTS)
        throw Error(fmt::format("{}: attribute '{}' should be a list of ints", where_, name));
    return {a->ints().begin(), a->ints().end()};
}

std::optional<ConstTensor> NodeAttributes::get_tensor(const std::string& name) const {
    const auto* a = find(node_, name);
    if (!a) return std::nullopt;
    if (a->type() != onnx::AttributeProto::TENSOR)
        throw Error(fmt::format("{}: attribute '{}' should be a tensor", where_, name));
    return decode_tensor(a->t(), where_);
}

}  // namespace iostune::onnx_import
