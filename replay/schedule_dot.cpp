#include "replay/schedule_dot.h"

#include <fmt/format.h>

#include <array>

namespace iostune {

namespace {

// Distinct fills for the groups of one stage (cycled when a stage has more groups).
constexpr std::array<const char*, 8> kGroupColours = {"#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f",
                                                      "#cab2d6", "#ffff99", "#8dd3c7", "#fccde5"};

// Graphviz double-quoted string body.
std::string quoted(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

std::string schedule_to_dot(const Graph& graph, const Schedule& schedule,
                            const std::string& title) {
    std::string dot = fmt::format(
        "digraph schedule {{\n  label=\"{}\";\n  labelloc=t;\n  "
        "rankdir=TB;\n  node [shape=box, style=filled, fontsize=10];\n"
        "  input [label=\"input {}x{}x{}x{}\", fillcolor=white];\n",
        quoted(title), graph.input_shape().n, graph.input_shape().c, graph.input_shape().h,
        graph.input_shape().w);
    int stage_index = 0;
    for (size_t b = 0; b < schedule.blocks.size(); ++b) {
        for (const Stage& stage : schedule.blocks[b]) {
            dot += fmt::format("  subgraph cluster_{} {{\n    label=\"block {} stage {}: {}\";\n",
                               stage_index, b, stage_index, to_string(stage.strategy));
            if (stage.strategy == StageStrategy::Merge) dot += "    style=bold;\n";
            for (size_t g = 0; g < stage.groups.size(); ++g) {
                for (int id : stage.groups[g]) {
                    const Op& op = graph.op(id);
                    const int level = priority_of(schedule, id);
                    dot += fmt::format("    op{} [label=\"{}\\n{}{}\", fillcolor=\"{}\"{}];\n", id,
                                       quoted(op.name), to_string(op.kind),
                                       level > 0 ? fmt::format("\\npriority {}", level) : "",
                                       kGroupColours[g % kGroupColours.size()],
                                       level > 0 ? ", penwidth=2" : "");
                }
            }
            dot += "  }\n";
            ++stage_index;
        }
    }
    for (const Op& op : graph.ops()) {
        for (int input : op.inputs) {
            dot += is_graph_input(input) ? fmt::format("  input -> op{};\n", op.id)
                                        : fmt::format("  op{} -> op{};\n", input, op.id);
        }
    }
    dot += "}\n";
    return dot;
}

}  // namespace iostune
