#include "src/onnx/node_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/quoted.h"

namespace iostune::onnx_import {

namespace {

constexpr int kUnbounded = std::numeric_limits<int>::max();

// Ops iostune imports that the libonnx it is built with predates (Gelu is opset 20), as ONNX
// defines them.
const std::vector<OpSchemaEntry>& iostune_schemas() {
    static const std::vector<OpSchemaEntry> table = {
        {"Gelu", 20, 1, 1, 1, 1, "r", "r",
         {{"approximate", onnx::AttributeProto::STRING, false}}},
    };
    return table;
}

// INT attributes that ONNX defines as flags: anything but 0 and 1 is a malformed file, not a
// value to read as "true".
bool is_flag(const std::string& name) {
    static const std::set<std::string> flags = {
        "allowzero",     "antialias",          "ceil_mode",       "center_point_box",
        "count_include_pad", "detect_negative", "detect_positive", "exclude_outside",
        "exclusive",     "fmod",               "input_forget",    "keepdims",
        "largest",       "linear_before_reset", "new_axis",       "noop_with_empty_axes",
        "reverse",       "select_last_index",  "sorted",          "storage_order",
        "training_mode", "transA",             "transB",          "upper",
    };
    return flags.count(name) > 0;
}

// Versions of each op, oldest first.
const std::unordered_map<std::string, std::vector<const OpSchemaEntry*>>& schemas_by_op() {
    static const auto by_op = [] {
        std::unordered_map<std::string, std::vector<const OpSchemaEntry*>> map;
        for (const auto* table : {&onnx_schema_table(), &iostune_schemas()})
            for (const OpSchemaEntry& e : *table) map[e.op_type].push_back(&e);
        for (auto& [op, versions] : map)
            std::sort(versions.begin(), versions.end(), [](const auto* a, const auto* b) {
                return a->since_version < b->since_version;
            });
        return map;
    }();
    return by_op;
}

std::string type_name(int type) {
    const std::string name =
        onnx::AttributeProto::AttributeType_IsValid(type)
            ? onnx::AttributeProto::AttributeType_Name(onnx::AttributeProto::AttributeType(type))
            : std::string();
    return name.empty() ? fmt::format("type {}", type) : name;
}

std::string count_range(int min, int max) {
    if (min == max) return fmt::format("{}", min);
    if (max == kUnbounded) return fmt::format("{} or more", min);
    return fmt::format("{} to {}", min, max);
}

// Whether formal parameter `index` must be named (a Single one, as onnx.checker has it; the
// inputs a variadic parameter takes past the list are not).
bool required(const char* letters, int index) {
    const std::string_view list(letters);
    return index < int(list.size()) && list[size_t(index)] == 'r';
}

// Inputs or outputs (`kind`, singular): the count within the schema's range, no required one
// left empty.
template <class Names>
void check_arity(const Names& names, const char* kind, int min, int max, const char* letters,
                 const OpSchemaEntry& schema, int opset, const std::string& where) {
    const int count = names.size();
    if (count < min || count > max)
        throw Error(fmt::format("{}: the node lists {} {}{}; {} (opset {}) takes {}", where,
                                count, kind, count == 1 ? "" : "s", schema.op_type, opset,
                                count_range(min, max)));
    for (int i = 0; i < count; ++i)
        if (names.Get(i).empty() && required(letters, i))
            throw Error(fmt::format("{}: {} {} is required but its name is empty", where, kind, i));
}

std::string attribute_names(const OpSchemaEntry& schema) {
    std::string names;
    for (const AttributeSchema& a : schema.attributes)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", a.name);
    return names.empty() ? "no attributes" : names;
}

void check_attributes(const onnx::NodeProto& node, const OpSchemaEntry& schema, int opset,
                      const std::string& where) {
    std::set<std::string> seen;
    for (const onnx::AttributeProto& a : node.attribute()) {
        if (!seen.insert(a.name()).second)
            throw Error(
                fmt::format("{}: attribute {} is given twice", where, quoted_name(a.name())));
        const auto known =
            std::find_if(schema.attributes.begin(), schema.attributes.end(),
                         [&](const AttributeSchema& s) { return a.name() == s.name; });
        if (known == schema.attributes.end())
            throw Error(fmt::format("{}: {} is not an attribute of {} at opset {} (it takes {}); "
                                    "remove it or fix its name",
                                    where, quoted_name(a.name()), schema.op_type, opset,
                                    attribute_names(schema)));
        if (a.type() != known->type)
            throw Error(fmt::format("{}: attribute {} is {}, ONNX defines it as {}", where,
                                    quoted_name(a.name()), type_name(a.type()),
                                    type_name(known->type)));
        if (a.type() == onnx::AttributeProto::INT && is_flag(a.name()) && a.i() != 0 && a.i() != 1)
            throw Error(fmt::format("{}: attribute {} is {}; it is a flag, 0 or 1", where,
                                    quoted_name(a.name()), a.i()));
    }
    for (const AttributeSchema& s : schema.attributes)
        if (s.required && !seen.count(s.name))
            throw Error(fmt::format("{}: the required attribute '{}' is missing", where, s.name));
}

}  // namespace

const OpSchemaEntry* find_op_schema(const std::string& op_type, int opset) {
    const auto& by_op = schemas_by_op();
    const auto it = by_op.find(op_type);
    if (it == by_op.end()) return nullptr;
    const OpSchemaEntry* chosen = it->second.front();
    for (const OpSchemaEntry* e : it->second)
        if (e->since_version <= opset) chosen = e;
    return chosen;
}

void check_node_schema(const onnx::NodeProto& node, int opset, const std::string& where) {
    const OpSchemaEntry* schema = find_op_schema(node.op_type(), opset);
    if (!schema) return;
    check_arity(node.input(), "input", schema->min_inputs, schema->max_inputs, schema->inputs,
                *schema, opset, where);
    check_arity(node.output(), "output", schema->min_outputs, schema->max_outputs,
                schema->outputs, *schema, opset, where);
    check_attributes(node, *schema, opset, where);
}

}  // namespace iostune::onnx_import
