#include "src/buffer_access.h"

#include <algorithm>

namespace iostune {

namespace {

BufferAccess access(const MemoryPlan& plan, int tensor, int channels, bool write) {
    const TensorPlace& p = plan.place_of(tensor);
    return {p.buffer, p.first_channel, channels, write};
}

BufferAccess whole(const MemoryPlan& plan, int buffer, bool write) {
    return {buffer, 0, plan.buffers[size_t(buffer)].shape.c, write};
}

void add_scratch(const MemoryPlan& plan, const OpScratch& s, std::vector<BufferAccess>& out) {
    for (int b : {s.depthwise_output, s.staged_input, s.staged_output})
        if (b >= 0) out.push_back(whole(plan, b, true));
}

std::vector<BufferAccess> op_accesses(const Graph& graph, const MemoryPlan& plan, int id) {
    const Op& op = graph.op(id);
    std::vector<BufferAccess> out;
    if (op.kind == OpKind::ChannelSlice) return out;  // a view: nothing runs
    for (int in : op.inputs) out.push_back(access(plan, in, graph.tensor_shape(in).c, false));
    out.push_back(access(plan, id, op.output.c, true));
    add_scratch(plan, plan.scratch[size_t(id)], out);
    return out;
}

// A batched merge: every member's input, output and scratch, all at once.
std::vector<BufferAccess> batched_accesses(const Graph& graph, const MemoryPlan& plan,
                                           const Launch& launch) {
    std::vector<BufferAccess> out;
    for (int id : launch.ops) {
        const std::vector<BufferAccess> own = op_accesses(graph, plan, id);
        out.insert(out.end(), own.begin(), own.end());
    }
    return out;
}

std::vector<BufferAccess> merge_accesses(const Graph& graph, const MemoryPlan& plan,
                                         const Launch& launch) {
    if (merge_kind(graph, launch.ops) == MergeKind::Batched)
        return batched_accesses(graph, plan, launch);
    const Stage stage{StageStrategy::Merge, {launch.ops}};
    const MergePlacement* m = plan.merge(stage_signature(stage));
    const int input = graph.op(launch.ops[0]).inputs[0];
    std::vector<BufferAccess> out{access(plan, input, graph.tensor_shape(input).c, false)};
    int first = 0;
    for (int id : launch.ops) {
        const int c = graph.op(id).output.c;
        const TensorPlace slice{m ? m->buffer : -1, first};
        if (!m || !(plan.op_places[size_t(id)] == slice)) out.push_back(access(plan, id, c, true));
        first += c;
    }
    if (m) {
        out.push_back(whole(plan, m->buffer, true));
        if (m->staged_input >= 0) out.push_back(whole(plan, m->staged_input, true));
    }
    // Its ops' own scratch too: the engine keeps each op's convolution bound to it (run alone,
    // or pointed at the next plan). Touched by no launch, it shared bytes with anything, the
    // op's own views included, and a convolution staging its output there wrote its concat
    // slice with packed strides (GoogLeNet's op 54 in co-run searches, docs/search-log.md).
    for (int id : launch.ops) add_scratch(plan, plan.scratch[size_t(id)], out);
    return out;
}

}  // namespace

std::vector<std::vector<BufferAccess>> launch_accesses(const Graph& graph, const MemoryPlan& plan,
                                                       const StreamProgram& program) {
    std::vector<std::vector<BufferAccess>> all;
    all.reserve(program.launches().size());
    for (const Launch& l : program.launches())
        all.push_back(l.merge ? merge_accesses(graph, plan, l)
                              : op_accesses(graph, plan, l.ops[0]));
    return all;
}

bool uses_workspace(const Graph& graph, const Launch& launch) {
    if (launch.merge) return true;
    const OpKind kind = graph.op(launch.ops[0]).kind;
    return kind == OpKind::Conv || kind == OpKind::SepConv || kind == OpKind::ConvTranspose;
}

}  // namespace iostune
