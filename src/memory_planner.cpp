// The memory planner (memory_planner.h): placement (which tensors share a buffer: concat slices,
// channel views, merged outputs), scratch, lifetimes under the schedule's stream program, and
// offsets by TFLite's greedy-by-size heuristic (offset_assignment.h).
#include "src/memory_planner.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/buffer_access.h"
#include "src/offset_assignment.h"
#include "src/operator_info.h"
#include "src/stream_program.h"

namespace iostune {

namespace {

constexpr int kChannelMultiple = 8;  // what tensor-core kernels want of a 16-bit NHWC input

int64_t round_up(int64_t bytes) {
    return (bytes + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
}

std::string op_name(const Graph& graph, int id) {
    return fmt::format("op {} '{}'", id, graph.op(id).name);
}

// A producer whose only consumer is a Concat writes its channel slice of the concat's output
// (the engine's rule; a ChannelSlice, a view never written, and the graph input are copied).
struct ConcatSlice {
    int concat = -1;
    int first_channel = 0;
};

std::vector<ConcatSlice> concat_slices(const Graph& graph, bool in_place) {
    std::vector<ConcatSlice> slices(size_t(graph.size()));
    if (!in_place) return slices;
    const auto consumers = graph.consumers();
    for (const Op& op : graph.ops()) {
        if (op.kind != OpKind::Concat) continue;
        int offset = 0;
        for (int in : op.inputs) {
            const bool sole_use = !is_graph_input(in) &&
                                  graph.op(in).kind != OpKind::ChannelSlice &&
                                  consumers[size_t(in)] == std::vector<int>{op.id} &&
                                  std::count(op.inputs.begin(), op.inputs.end(), in) == 1;
            if (sole_use) slices[size_t(in)] = {op.id, offset};
            offset += graph.tensor_shape(in).c;
        }
    }
    return slices;
}

// Graph input k as ops read it: an RGB input read only by dense convolutions is padded to 8
// channels in 16-bit channels-last storage when asked (EngineOptions::pad_input_channels).
Shape stored_input_shape(const Graph& graph, int k, const MemoryPlanOptions& o) {
    const Shape& shape = graph.input_shape(k);
    if (!o.pad_input_channels || o.layout != TensorLayout::Nhwc || !is_half(o.precision) ||
        shape.c % kChannelMultiple == 0)
        return shape;
    // A residual convolution's z (its input 1) is added as it is: it must not be padded.
    for (const Op& op : graph.ops())
        for (size_t i = 0; i < op.inputs.size(); ++i)
            if (op.inputs[i] == graph_input_id(k) &&
                (op.kind != OpKind::Conv || op.as<ConvAttrs>().groups != 1 || i != 0))
                return shape;
    Shape padded = shape;
    padded.c = (shape.c + kChannelMultiple - 1) / kChannelMultiple * kChannelMultiple;
    return padded;
}

// Builds the buffers and places of a plan (no offsets yet).
class Placement {
public:
    Placement(const Graph& graph, const MemoryPlanOptions& options, const Schedule* schedule)
        : graph_(graph), slices_(concat_slices(graph, options.concat_in_place)) {
        plan_.options = options;
        if (schedule) plan_.schedule = *schedule;
    }

    MemoryPlan build() {
        place_inputs();
        place_ops();
        place_channel_slices();
        pin_outputs();
        if (plan_.schedule) place_merges();
        drop_unused();
        add_output_copies();
        add_scratch();
        return std::move(plan_);
    }

private:
    int add(std::string name, BufferKind kind, const Shape& shape, int op, bool pinned = false) {
        PlannedBuffer b;
        b.name = std::move(name);
        b.kind = kind;
        b.shape = shape;
        // The caller's copies are float whatever the storage.
        const bool float_copy = kind == BufferKind::InputFloat || kind == BufferKind::OutputFloat;
        b.bytes =
            round_up(shape.elements() * (float_copy ? int64_t(sizeof(float))
                                                    : element_bytes(plan_.options.precision)));
        b.pinned = pinned;
        b.op = op;
        plan_.buffers.push_back(std::move(b));
        return int(plan_.buffers.size()) - 1;
    }

    // Each input as ops read it, and the caller's float NCHW buffer where the storage differs.
    void place_inputs() {
        for (int k = 0; k < graph_.input_count(); ++k) {
            const Shape stored = stored_input_shape(graph_, k, plan_.options);
            const int input =
                add(fmt::format("graph input {}", k), BufferKind::Input, stored, -1, true);
            plan_.input_places.push_back({input, 0});
            const bool native_float = !is_half(plan_.options.precision) &&
                                      plan_.options.layout == TensorLayout::Nchw &&
                                      stored == graph_.input_shape(k);
            plan_.input_float.push_back(
                native_float ? input
                             : add(fmt::format("float NCHW copy of graph input {}", k),
                                   BufferKind::InputFloat, graph_.input_shape(k), -1, true));
        }
    }

    // Own buffers first, then concat slices from the last op backwards (a concat's own place,
    // possibly a slice of an outer concat, is known before its producers').
    void place_ops() {
        const int n = graph_.size();
        plan_.op_places.assign(size_t(n), TensorPlace{});
        for (const Op& op : graph_.ops())
            if (slices_[size_t(op.id)].concat < 0 && op.kind != OpKind::ChannelSlice)
                plan_.op_places[size_t(op.id)] = {add("output of " + op_name(graph_, op.id),
                                                      BufferKind::Activation, op.output, op.id),
                                                  0};
        for (int id = n - 1; id >= 0; --id) {
            const ConcatSlice& s = slices_[size_t(id)];
            if (s.concat < 0) continue;
            const TensorPlace& concat = plan_.op_places[size_t(s.concat)];
            plan_.op_places[size_t(id)] = {concat.buffer, concat.first_channel + s.first_channel};
        }
    }

    // In op order, so a slice of a slice finds its input placed.
    void place_channel_slices() {
        for (const Op& op : graph_.ops()) {
            if (op.kind != OpKind::ChannelSlice) continue;
            const TensorPlace source = plan_.place_of(op.inputs.at(0));
            plan_.op_places[size_t(op.id)] = {
                source.buffer, source.first_channel + op.as<ChannelSliceAttrs>().begin};
        }
    }

    // A buffer that holds a graph output (an output op's, or a view of it) is read after the
    // launch: it never shares bytes.
    void pin_outputs() {
        for (int id : graph_.outputs())
            plan_.buffers[size_t(plan_.place_of(id).buffer)].pinned = true;
    }

    // Each merge stage's stacked output; its ops live in their slices unless their home is a
    // concat slice or holds a graph output (then the merge copies them out).
    // (A batched merge's ops keep their own homes: nothing is stacked.)
    void place_merges() {
        for (const Stage& stage : plan_.schedule->flat_stages()) {
            if (stage.strategy != StageStrategy::Merge ||
                merge_kind(graph_, stage.groups.at(0)) == MergeKind::Batched)
                continue;
            MergePlacement m;
            m.signature = stage_signature(stage);
            m.ops = stage.groups.at(0);
            const Shape& s0 = graph_.op(m.ops[0]).output;
            Shape merged{s0.n, 0, s0.h, s0.w};
            for (int id : m.ops) merged.c += graph_.op(id).output.c;
            m.buffer = add("merged output of " + m.signature, BufferKind::Merged, merged, -1);
            int first = 0;
            for (int id : m.ops) {
                const TensorPlace home = plan_.op_places[size_t(id)];
                if (slices_[size_t(id)].concat < 0 && !plan_.buffers[size_t(home.buffer)].pinned)
                    plan_.op_places[size_t(id)] = {m.buffer, first};
                first += graph_.op(id).output.c;
            }
            plan_.merges.push_back(std::move(m));
        }
        place_channel_slices();  // views of merged ops follow them
    }

    // Buffers no tensor lives in any more (merged ops' own homes) are removed.
    void drop_unused() {
        std::vector<bool> used(plan_.buffers.size(), false);
        for (const TensorPlace& p : plan_.op_places) used[size_t(p.buffer)] = true;
        for (const TensorPlace& p : plan_.input_places) used[size_t(p.buffer)] = true;
        for (int b : plan_.input_float) used[size_t(b)] = true;
        for (const MergePlacement& m : plan_.merges) used[size_t(m.buffer)] = true;
        std::vector<int> new_id(plan_.buffers.size(), -1);
        std::vector<PlannedBuffer> kept;
        for (size_t b = 0; b < plan_.buffers.size(); ++b) {
            if (!used[b]) continue;
            new_id[b] = int(kept.size());
            kept.push_back(std::move(plan_.buffers[b]));
        }
        plan_.buffers = std::move(kept);
        for (TensorPlace& p : plan_.op_places) p.buffer = new_id[size_t(p.buffer)];
        for (TensorPlace& p : plan_.input_places) p.buffer = new_id[size_t(p.buffer)];
        for (int& b : plan_.input_float) b = new_id[size_t(b)];
        for (MergePlacement& m : plan_.merges) m.buffer = new_id[size_t(m.buffer)];
    }

    // The caller's float NCHW copy of each output whose own view is anything else.
    void add_output_copies() {
        const std::vector<int> outputs = graph_.outputs();
        for (size_t k = 0; k < outputs.size(); ++k) {
            const int id = outputs[k];
            const Shape& shape = graph_.op(id).output;
            const bool own_view_is_float_nchw = !is_half(plan_.options.precision) &&
                                                plan_.options.layout == TensorLayout::Nchw &&
                                                plan_.packed(plan_.place_of(id), shape);
            plan_.output_float.push_back(
                own_view_is_float_nchw
                    ? -1
                    : add(fmt::format("float NCHW copy of output {} ({})", k, op_name(graph_, id)),
                          BufferKind::OutputFloat, shape, id, true));
        }
    }

    // The shape of tensor `id` as ops read it (a graph input with its padded channels).
    Shape read_shape(int id) const {
        return is_graph_input(id)
                   ? plan_.buffers[size_t(plan_.input_places[size_t(graph_input_index(id))].buffer)]
                         .shape
                   : graph_.tensor_shape(id);
    }

    bool strided(int id) const { return !plan_.packed(plan_.place_of(id), read_shape(id)); }

    // Whether op `id`'s convolution stages its input / output: may (no StagingUse) or does.
    bool stages_input(int id) const {
        const auto& use = plan_.options.staging;
        return !use || (size_t(id) < use->input.size() && use->input[size_t(id)]);
    }
    bool stages_output(int id) const {
        const auto& use = plan_.options.staging;
        return !use || (size_t(id) < use->output.size() && use->output[size_t(id)]);
    }
    bool merge_stages_input(const std::string& signature) const {
        const auto& use = plan_.options.staging;
        if (!use) return true;
        const auto it = use->merge_input.find(signature);
        return it != use->merge_input.end() && it->second;
    }

    int scratch(const std::string& what, int op, const Shape& shape) {
        return add(fmt::format("{} of {}", what, op_name(graph_, op)), BufferKind::Scratch, shape,
                   op);
    }

    // What the engine's op plans stage or keep aside (op_plans.cpp, deployed_ops.cpp): cuDNN and
    // cuBLAS read packed copies of strided views; a SepConv's depthwise result is its own.
    void add_scratch() {
        plan_.scratch.assign(size_t(graph_.size()), OpScratch{});
        for (const Op& op : graph_.ops()) {
            OpScratch& s = plan_.scratch[size_t(op.id)];
            const int in = op.inputs.at(0);
            const bool in_strided = strided(in) && stages_input(op.id);
            const bool out_strided = strided(op.id) && stages_output(op.id);
            switch (op.kind) {
                case OpKind::Conv:
                case OpKind::ConvTranspose:
                    if (in_strided) s.staged_input = scratch("staged input", op.id, read_shape(in));
                    if (out_strided) s.staged_output = scratch("staged output", op.id, op.output);
                    break;
                case OpKind::SepConv: {
                    const Shape& o = op.output;
                    s.depthwise_output =
                        scratch("depthwise output", op.id, Shape{o.n, read_shape(in).c, o.h, o.w});
                    if (in_strided || (op.as<SepConvAttrs>().pre_relu && stages_input(op.id)))
                        s.staged_input = scratch("staged input", op.id, read_shape(in));
                    if (out_strided) s.staged_output = scratch("staged output", op.id, op.output);
                    break;
                }
                case OpKind::Linear:  // packs every strided channels-last input
                    if (strided(in) && plan_.options.layout == TensorLayout::Nhwc)
                        s.staged_input = scratch("packed input", op.id, read_shape(in));
                    break;
                default:
                    break;
            }
        }
        for (MergePlacement& m : plan_.merges) {
            const int in = graph_.op(m.ops[0]).inputs[0];
            if (strided(in) && merge_stages_input(m.signature))
                m.staged_input = add("staged input of merge " + m.signature, BufferKind::Scratch,
                                     read_shape(in), -1);
        }
    }

    const Graph& graph_;
    std::vector<ConcatSlice> slices_;
    MemoryPlan plan_;
};

// The launches (in the program's order) that access each buffer, sorted, without repeats.
std::vector<std::vector<int>> buffer_launches(
    const MemoryPlan& plan, const std::vector<std::vector<BufferAccess>>& accesses) {
    std::vector<std::vector<int>> launches(plan.buffers.size());
    for (size_t l = 0; l < accesses.size(); ++l)
        for (const BufferAccess& a : accesses[l]) {
            auto& list = launches[size_t(a.buffer)];
            if (list.empty() || list.back() != int(l)) list.push_back(int(l));
        }
    return launches;
}

// Every access of `a` happens before every access of `b`.
bool all_before(const StreamProgram& program, const std::vector<int>& a,
                const std::vector<int>& b) {
    if (a.empty() || b.empty()) return true;
    if (a.back() >= b.front()) return false;  // launches are in a topological order
    for (int x : a)
        for (int y : b)
            if (!program.happens_before(x, y)) return false;
    return true;
}

// Buffers `a` and `b` may be live at the same time: neither's accesses all precede the other's.
bool in_conflict(const StreamProgram& program, const std::vector<int>& a,
                 const std::vector<int>& b) {
    return !all_before(program, a, b) && !all_before(program, b, a);
}

// The I/O region: pinned buffers one after another, in buffer order (which depends on the
// graph only).
int64_t place_pinned(MemoryPlan& plan) {
    int64_t end = 0;
    for (PlannedBuffer& b : plan.buffers) {
        if (!b.pinned) continue;
        b.offset = end;
        end += b.bytes;
    }
    return end;
}

// The shared region: greedy by size over the buffers' lifetimes under the program (without a
// program or without reuse every pair conflicts).
int64_t place_shared(MemoryPlan& plan, const StreamProgram* program,
                     const std::vector<std::vector<int>>& launches) {
    std::vector<int> ids;
    std::vector<int64_t> sizes;
    for (size_t b = 0; b < plan.buffers.size(); ++b)
        if (!plan.buffers[b].pinned) {
            ids.push_back(int(b));
            sizes.push_back(plan.buffers[b].bytes);
        }
    const bool reuse = program != nullptr && plan.options.reuse;
    const auto conflict = [&](int i, int j) {
        return !reuse || in_conflict(*program, launches[size_t(ids[size_t(i)])],
                                     launches[size_t(ids[size_t(j)])]);
    };
    const OffsetAssignment assigned =
        assign_offsets_greedy_by_size(sizes, conflict, kPlanAlignment);
    for (size_t i = 0; i < ids.size(); ++i)
        plan.buffers[size_t(ids[i])].offset = assigned.offsets[i];
    return assigned.total_bytes;
}

// The largest sum of shared buffers live (between their first and last access) at one launch
// of the program's order, plus the I/O region.
int64_t liveness_bound(const MemoryPlan& plan, size_t launch_count,
                       const std::vector<std::vector<int>>& launches) {
    std::vector<int64_t> delta(launch_count + 1, 0);
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
        if (plan.buffers[b].pinned || launches[b].empty()) continue;
        delta[size_t(launches[b].front())] += plan.buffers[b].bytes;
        delta[size_t(launches[b].back()) + 1] -= plan.buffers[b].bytes;
    }
    int64_t live = 0, peak = 0;
    for (size_t t = 0; t < launch_count; ++t) peak = std::max(peak, live += delta[t]);
    return peak + plan.io_bytes;
}

// Each workspace-taking launch gets a slot whose previous user happens before it: first the
// slot last used on its own lane, then the lowest such slot, else a new one. A lane's slot is
// then never taken by two lanes' latest launches at once, so there are at most as many slots
// as lanes, and as many as convolutions can run at the same time in the usual case.
void assign_workspace_slots(const Graph& graph, const StreamProgram& program, MemoryPlan& plan) {
    const auto& all = program.launches();
    plan.workspace_slot.assign(all.size(), -1);
    std::vector<int> last_user;
    for (size_t i = 0; i < all.size(); ++i) {
        if (!uses_workspace(graph, all[i])) continue;
        int slot = -1;
        for (size_t s = 0; s < last_user.size() && slot < 0; ++s)
            if (all[size_t(last_user[s])].lane == all[i].lane) slot = int(s);
        for (size_t s = 0; s < last_user.size() && slot < 0; ++s)
            if (program.happens_before(last_user[s], int(i))) slot = int(s);
        if (slot < 0) {
            slot = int(last_user.size());
            last_user.push_back(int(i));
        }
        last_user[size_t(slot)] = int(i);
        plan.workspace_slot[i] = slot;
    }
    plan.workspace_slots = int(last_user.size());
    plan.lanes = program.lane_count();
}

MemoryPlan finish(const Graph& graph, MemoryPlan plan, const StreamProgram& order,
                  const StreamProgram* reuse_under) {
    const auto accesses = launch_accesses(graph, plan, order);
    const auto launches = buffer_launches(plan, accesses);
    plan.io_bytes = place_pinned(plan);
    plan.shared_bytes = place_shared(plan, reuse_under, launches);
    plan.lower_bound_bytes = liveness_bound(plan, order.launches().size(), launches);
    return plan;
}

}  // namespace

const char* to_string(BufferKind kind) {
    switch (kind) {
        case BufferKind::Input:
            return "input";
        case BufferKind::InputFloat:
            return "float input";
        case BufferKind::Activation:
            return "activation";
        case BufferKind::Merged:
            return "merged output";
        case BufferKind::Scratch:
            return "scratch";
        case BufferKind::OutputFloat:
            return "float output";
    }
    return "?";
}

const MergePlacement* MemoryPlan::merge(const std::string& signature) const {
    for (const MergePlacement& m : merges)
        if (m.signature == signature) return &m;
    return nullptr;
}

bool MemoryPlan::packed(const TensorPlace& place, const Shape& shape) const {
    return place.first_channel == 0 && buffers.at(size_t(place.buffer)).shape.c == shape.c;
}

const TensorPlace& MemoryPlan::place_of(int id) const {
    return is_graph_input(id) ? input_places.at(size_t(graph_input_index(id)))
                              : op_places.at(size_t(id));
}

std::string MemoryPlan::describe(int buffer) const {
    const PlannedBuffer& b = buffers.at(size_t(buffer));
    return fmt::format("{} ({} bytes [{}, {}) of the {} region)", b.name, b.bytes, b.offset,
                       b.offset + b.bytes, b.pinned ? "I/O" : "shared");
}

MemoryPlan plan_memory(const Graph& graph, const Schedule& schedule,
                       const MemoryPlanOptions& options) {
    const StreamProgram program(graph, schedule);  // validates
    MemoryPlan plan = Placement(graph, options, &schedule).build();
    assign_workspace_slots(graph, program, plan);
    return finish(graph, std::move(plan), program, &program);
}

MemoryPlan plan_memory_without_schedule(const Graph& graph, const MemoryPlanOptions& options) {
    MemoryPlan plan = Placement(graph, options, nullptr).build();
    // The sequential order only for the liveness bound: nothing is reused.
    const StreamProgram sequential(graph, sequential_schedule(graph));
    return finish(graph, std::move(plan), sequential, nullptr);
}

int64_t concurrency_lower_bound(const Graph& graph, const MemoryPlan& plan,
                                const StreamProgram& program) {
    const auto launches = buffer_launches(plan, launch_accesses(graph, plan, program));
    // A buffer is possibly live at launch l unless all its accesses end before l or start
    // after it.
    const auto live_at = [&](const std::vector<int>& uses, int l) {
        bool all_before_l = true, all_after_l = true;
        for (int a : uses) {
            all_before_l = all_before_l && program.happens_before(a, l);
            all_after_l = all_after_l && program.happens_before(l, a);
        }
        return !uses.empty() && !all_before_l && !all_after_l;
    };
    int64_t heaviest = 0;
    for (int l = 0; l < int(program.launches().size()); ++l) {
        std::vector<int> live;
        for (size_t b = 0; b < plan.buffers.size(); ++b)
            if (!plan.buffers[b].pinned && live_at(launches[b], l)) live.push_back(int(b));
        std::stable_sort(live.begin(), live.end(), [&](int a, int b) {
            return plan.buffers[size_t(a)].bytes > plan.buffers[size_t(b)].bytes;
        });
        std::vector<int> clique;
        int64_t bytes = 0;
        for (int b : live) {
            const bool fits = std::all_of(clique.begin(), clique.end(), [&](int c) {
                return in_conflict(program, launches[size_t(b)], launches[size_t(c)]);
            });
            if (!fits) continue;
            clique.push_back(b);
            bytes += plan.buffers[size_t(b)].bytes;
        }
        heaviest = std::max(heaviest, bytes);
    }
    return heaviest + plan.io_bytes;
}

int64_t weight_bytes(const Graph& graph, const MemoryPlanOptions& options,
                     const Schedule* schedule) {
    const int64_t e = element_bytes(options.precision);
    const bool nhwc = options.layout == TensorLayout::Nhwc;
    int64_t elements = 0;
    const auto input_channels = [&](int id) {
        return is_graph_input(id) ? stored_input_shape(graph, graph_input_index(id), options).c
                                  : graph.tensor_shape(id).c;
    };
    for (const Op& op : graph.ops()) {
        const auto dims = param_shapes(graph, op.id);
        switch (op.kind) {
            case OpKind::Conv: {
                const auto& a = op.as<ConvAttrs>();
                const auto& d = dims.at(0);  // [Cout, Cin/groups, kh, kw]
                const int stored =
                    is_graph_input(op.inputs[0]) ? input_channels(op.inputs[0]) / a.groups : d[1];
                elements += int64_t(d[0]) * stored * d[2] * d[3] + (a.bias ? d[0] : 0);
                const int in_c = graph.tensor_shape(op.inputs[0]).c;
                if (nhwc && a.groups == in_c && a.out_channels == in_c)
                    elements += int64_t(in_c) * d[2] * d[3];  // the depthwise kernel's copy
                break;
            }
            case OpKind::SepConv: {
                const auto& dw = dims.at(0);
                const auto& pw = dims.at(1);
                elements +=
                    int64_t(dw[0]) * dw[1] * dw[2] * dw[3] + int64_t(pw[0]) * pw[1] * pw[2] * pw[3];
                if (nhwc) elements += int64_t(dw[0]) * dw[2] * dw[3];
                if (op.as<SepConvAttrs>().bias) elements += pw[0];
                break;
            }
            case OpKind::Linear:
            case OpKind::ConvTranspose:
            case OpKind::ChannelAffine:
            case OpKind::ChannelNorm:
                for (const auto& d : dims) {
                    int64_t count = 1;
                    for (int x : d) count *= x;
                    elements += count;
                }
                break;
            default:
                break;
        }
    }
    if (schedule) {
        for (const Stage& stage : schedule->flat_stages()) {
            // A batched merge runs on its ops' own weights.
            if (stage.strategy != StageStrategy::Merge ||
                merge_kind(graph, stage.groups.at(0)) == MergeKind::Batched)
                continue;
            int channels = 0, kh = 0, kw = 0;
            for (int id : stage.groups.at(0)) {
                const auto& a = graph.op(id).as<ConvAttrs>();
                channels += a.out_channels;
                kh = std::max(kh, a.kernel_h);
                kw = std::max(kw, a.kernel_w);
            }
            const Op& first = graph.op(stage.groups[0][0]);
            elements += int64_t(channels) * input_channels(first.inputs[0]) * kh * kw +
                        (first.as<ConvAttrs>().bias ? channels : 0);
        }
    }
    return elements * e;
}

int64_t workspace_bytes_estimate(const MemoryPlan& plan, int64_t cap_per_slot) {
    return int64_t(std::max(plan.workspace_slots, 1)) * cap_per_slot +
           int64_t(std::max(plan.lanes, 1)) * kCublasWorkspaceBytes;
}

}  // namespace iostune
