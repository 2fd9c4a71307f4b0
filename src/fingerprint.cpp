// The structural fingerprint: FNV-1a 64 over a canonical text serialisation of the graph's
// structure. The serialisation is documented in docs/model-format.md; changing it changes every
// fingerprint and orphans every stored schedule, so it carries its own version line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <variant>

#include "src/attr_fields.h"
#include "src/model_json.h"

namespace iostune {

namespace {

// A model set (model_set.h) is keyed by its members' own fingerprints, in order, and whether
// they share one input: the same models in another order, or with separate inputs, are another
// key; the members' weights are not part of it (a schedule fits any weights).
std::string canonical_set(const Graph& graph) {
    bool shared = true;
    for (const GraphMember& m : graph.members()) shared = shared && m.input == kGraphInput;
    std::string text = fmt::format("iostune-model-set 1\ninputs {}\n", shared ? "shared" : "separate");
    for (const GraphMember& m : graph.members()) text += fmt::format("member {}\n", m.fingerprint);
    return text;
}

// Integers and booleans as integers (0/1), enums by name, floats in the shortest text that
// reads back to the same float, a nested struct as its fields in parentheses.
template <class T>
std::string field_text(const T& value) {
    if constexpr (is_attr_enum_v<T>) {
        return to_string(value);
    } else if constexpr (std::is_same_v<T, float>) {
        return fmt::format("{}", value);
    } else if constexpr (is_nested_attrs_v<T>) {
        std::string text;
        for_each_attr_field(*value, [&](const char* name, const auto& field) {
            text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, field_text(field));
        });
        return "(" + text + ")";
    } else {
        return std::to_string(int(value));
    }
}

std::string canonical_structure(const Graph& graph) {
    const Shape& in = graph.input_shape();
    std::string text = fmt::format("iostune-structure 1\ninput {} {} {}\n", in.c, in.h, in.w);
    // Extra inputs and named outputs only where a graph has them, so single-input,
    // last-op-output graphs keep their fingerprints.
    for (int k = 1; k < graph.input_count(); ++k) {
        const Shape& extra = graph.input_shape(k);
        text += fmt::format("input:{} {} {} {}\n", k, extra.c, extra.h, extra.w);
    }
    for (const Op& op : graph.ops()) {
        std::string inputs;
        for (int src : op.inputs) {
            if (!inputs.empty()) inputs += ',';
            inputs += src == kGraphInput      ? std::string("input")
                      : is_graph_input(src) ? fmt::format("input:{}", graph_input_index(src))
                                            : std::to_string(src);
        }
        text += fmt::format("op {} {} cell={} inputs={}", op.id, to_string(op.kind), op.cell, inputs);
        std::visit([&](const auto& attrs) {
            for_each_attr_field(attrs, [&](const char* name, const auto& value) {
                if (!omitted_field(name, value))
                    text += fmt::format(" {}={}", name, field_text(value));
            });
        }, op.attrs);
        text += '\n';
    }
    if (graph.output_count() > 1 || graph.output_id() != graph.size() - 1)
        text += fmt::format("outputs {}\n", fmt::join(graph.outputs(), ","));
    return text;
}

uint64_t fnv1a64(const std::string& bytes) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (unsigned char byte : bytes) {
        hash ^= byte;
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

}  // namespace

std::string fingerprint(const Graph& graph) {
    const std::string text = graph.members().empty() ? canonical_structure(graph) : canonical_set(graph);
    return fmt::format("{:016x}", fnv1a64(text));
}

}  // namespace iostune
