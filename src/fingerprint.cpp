// The structural fingerprint: FNV-1a 64 over a canonical text serialisation of the graph's
// structure. The serialisation is documented in docs/model-format.md; changing it changes every
// fingerprint and orphans every stored schedule, so it carries its own version line.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <variant>

#include "src/attr_fields.h"
#include "src/model_json.h"

namespace iostune {

namespace {

std::string canonical_structure(const Graph& graph) {
    const Shape& in = graph.input_shape();
    std::string text = fmt::format("iostune-structure 1\ninput {} {} {}\n", in.c, in.h, in.w);
    for (const Op& op : graph.ops()) {
        std::string inputs;
        for (int src : op.inputs) {
            if (!inputs.empty()) inputs += ',';
            inputs += src == kGraphInput ? std::string("input") : std::to_string(src);
        }
        text += fmt::format("op {} {} cell={} inputs={}", op.id, to_string(op.kind), op.cell, inputs);
        std::visit([&](const auto& attrs) {
            for_each_attr_field(attrs, [&](const char* name, const auto& value) {
                text += fmt::format(" {}={}", name, int(value));
            });
        }, op.attrs);
        text += '\n';
    }
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
    return fmt::format("{:016x}", fnv1a64(canonical_structure(graph)));
}

}  // namespace iostune
