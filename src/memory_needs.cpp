#include "src/memory_needs.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "src/operator_info.h"

namespace iostune {

namespace {

constexpr int64_t kFloatBytes = 4;

int64_t weight_values(const Graph& graph) {
    int64_t values = 0;
    for (const Op& op : graph.ops()) values += param_count(graph, op.id);
    return values;
}

int64_t input_values(const Graph& graph) {
    int64_t values = 0;
    for (int k = 0; k < graph.input_count(); ++k) values += graph.input_shape(k).elements();
    return values;
}

// Values an op of the reference holds besides its output while it runs (reference.cpp): a
// residual convolution's sum before the add, a SepConv's rectified input and depthwise result.
int64_t reference_scratch(const Graph& graph, const Op& op) {
    if (op.kind == OpKind::Conv && op.as<ConvAttrs>().residual) return op.output.elements();
    if (op.kind != OpKind::SepConv) return 0;
    const Shape& in = graph.tensor_shape(op.inputs.at(0));
    const int64_t mid = int64_t(in.n) * in.c * op.output.h * op.output.w;
    return mid + (op.as<SepConvAttrs>().pre_relu ? in.elements() : 0);
}

// Whether op `id` writes its output into the concatenation that is its only reader (the engine's
// memory plan then gives it no buffer of its own).
bool writes_into_concat(const Graph& graph, const std::vector<std::vector<int>>& consumers,
                        int id) {
    if (graph.op(id).kind == OpKind::ChannelSlice || consumers[size_t(id)].size() != 1)
        return false;
    const Op& reader = graph.op(consumers[size_t(id)].front());
    return reader.kind == OpKind::Concat &&
           std::count(reader.inputs.begin(), reader.inputs.end(), id) == 1;
}

}  // namespace

MemoryNeeds reference_memory_needs(const Graph& graph) {
    std::vector<int> last_use(size_t(graph.size()), -1);
    for (const Op& op : graph.ops())
        for (int src : op.inputs)
            if (!is_graph_input(src)) last_use[size_t(src)] = op.id;
    const std::vector<int> kept = graph.outputs();
    int64_t live = 0, peak = 0;
    for (const Op& op : graph.ops()) {
        live += op.output.elements();
        peak = std::max(peak, live + reference_scratch(graph, op));
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            const int src = op.inputs[k];
            const bool read_before = std::find(op.inputs.begin(), op.inputs.begin() + long(k),
                                               src) != op.inputs.begin() + long(k);
            if (!is_graph_input(src) && !read_before && last_use[size_t(src)] == op.id &&
                std::find(kept.begin(), kept.end(), src) == kept.end())
                live -= graph.op(src).output.elements();  // once, if it reads src twice
        }
    }
    MemoryNeeds needs;
    if (graph.weights_state() == WeightsState::Absent)
        needs.weights = weight_values(graph) * kFloatBytes;
    needs.inputs = input_values(graph) * kFloatBytes;
    needs.activations = peak * kFloatBytes;
    return needs;
}

MemoryNeeds engine_memory_needs(const Graph& graph, int element_bytes) {
    const auto consumers = graph.consumers();
    int64_t values = 0;
    for (const Op& op : graph.ops())
        if (op.kind != OpKind::ChannelSlice && !writes_into_concat(graph, consumers, op.id))
            values += op.output.elements();
    MemoryNeeds needs;
    needs.weights = weight_values(graph) * element_bytes;
    needs.inputs = input_values(graph) * kFloatBytes;
    needs.activations = values * element_bytes;
    return needs;
}

std::string byte_text(int64_t bytes) {
    static constexpr std::array<const char*, 4> kUnits{"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) return fmt::format("{} bytes", bytes);
    double value = double(bytes) / 1024.0;
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < kUnits.size()) {
        value /= 1024.0;
        ++unit;
    }
    return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace iostune
