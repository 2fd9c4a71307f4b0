// Schedules: how a graph's ops are grouped into stages and run.
//
// A schedule holds, per block (see blocks.h), an ordered list of stages. A stage is either
//   concurrent: groups of ops, each group run in order on its own CUDA stream, groups at once;
//   merge:      one group of ops run as one launch: convolutions that read the same tensor as
//               one wider convolution over stacked, zero-padded weights (MergeKind::Stacked),
//               or same-shaped separable convolutions of parallel branches as batched kernels
//               (MergeKind::Batched: horizontal fusion).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/graph.h"

namespace iostune {

enum class StageStrategy { Concurrent, Merge };

// The highest level of Schedule::priorities (the GPU may have fewer: they are clamped).
constexpr int kMaxPriority = 3;

// How the stages run (stream_program.h): `staged`, every stage a barrier, as IOS's executor
// runs them; `dataflow`, stages only group the launches and each launch waits for its inputs.
enum class ScheduleForm { Staged, Dataflow };

struct Stage {
    StageStrategy strategy = StageStrategy::Concurrent;
    // Concurrent: groups of op ids, each in launch order. Merge: exactly one group, the merged ops.
    std::vector<std::vector<int>> groups;
    bool operator==(const Stage&) const = default;
};

struct Schedule {
    std::vector<std::vector<Stage>> blocks;  // stages of each block, in execution order
    ScheduleForm form = ScheduleForm::Staged;
    // Dataflow form only: flat stage indices, ascending, whose launches (and every later one)
    // wait for every launch of the stages before them. A memory limit places them
    // (memory_fit.h) so that work far apart never holds its buffers at once; between barriers
    // the launches still wait for their data alone. Staged form: empty (every stage is one).
    std::vector<int> barriers = {};
    // Per op id, how urgently its kernels are scheduled on the GPU (docs/search-log.md, "Critical
    // ops first"): 0 as any stream, 1..kMaxPriority ever higher CUDA stream priorities, so that
    // when launches compete for SMs the block scheduler serves the higher first. Either empty
    // (every op 0) or one level per op of the graph. Priorities add no dependency: the stream
    // program, the memory plan and the results are those of the schedule without them.
    std::vector<int> priorities = {};
    // All stages of all blocks, in execution order.
    std::vector<Stage> flat_stages() const;
    bool operator==(const Schedule&) const = default;
};

const char* to_string(StageStrategy strategy);
const char* to_string(ScheduleForm form);  // "staged", "dataflow"

// How a merge stage runs its ops.
//   Stacked: Conv ops that read one tensor, as one wider convolution (their outputs stacked).
//   Batched: SepConv ops of one shape (input, output, stride, dilation, pre-ReLU, bias; kernel
//            sizes may differ), each reading its own tensor or a shared one, as one batched
//            launch per phase: the depthwise kernels, then one batched GEMM for the pointwise
//            convolutions. Parallel branches of NASNet and RandWire cells are such ops.
enum class MergeKind { Stacked, Batched };

// Whether `ops` may run as one merge stage. Stacked: all Conv with the same input tensor, stride,
// groups == 1, dilation 1, bias and ReLU flags, output size, no residual (a fused add is not
// merged), and kernels whose centres line up once zero-padded to the largest ((k-1)/2 - pad
// equal per dimension). Batched: all SepConv of one shape (above), none reading another's
// output. `why` gets the reason if not.
bool can_merge(const Graph& graph, const std::vector<int>& ops, std::string* why = nullptr);

// The kind of a merge of `ops` (which must pass can_merge): Batched for SepConvs.
MergeKind merge_kind(const Graph& graph, const std::vector<int>& ops);

// Ops with equal keys may merge (can_merge has the last word): a Conv's input tensor, a
// SepConv's shape; nullopt for ops that never merge. The refinement's merge move groups by it.
std::optional<std::string> merge_key(const Graph& graph, int op);

// Throws iostune::Error with the first violation: an op missing or repeated, a dependency run
// after its consumer, two groups of one stage depending on each other, an illegal merge.
void validate(const Graph& graph, const Schedule& schedule);

// The one-topological-order schedule (one single-op stage per op), used as the baseline and as
// the fallback when no stored schedule may be replayed.
Schedule sequential_schedule(const Graph& graph);

// {"blocks": [...], "form": "dataflow", "barriers": [...], "priorities": [...]}; a document
// without "form" is staged (rows stored before the dataflow form existed), one without
// "priorities" has none.
nlohmann::json schedule_to_json(const Schedule& schedule);
Schedule schedule_from_json(const nlohmann::json& doc);  // throws iostune::Error on bad input

// An op's priority level (0 when the schedule has none), and how many ops run above 0.
int priority_of(const Schedule& schedule, int op);
int prioritised_ops(const Schedule& schedule);
// Equal but for their priorities: the same stream program's launches, lanes and waits, so the
// same memory plan (an engine does not plan again for other priorities alone).
bool same_launches(const Schedule& a, const Schedule& b);
// The same schedule in another form (without barriers; its priorities kept).
Schedule with_form(Schedule schedule, ScheduleForm form);

// Canonical text of a stage ("c:[1,2][3]" / "m:[4,5]"), used with the graph fingerprint to key
// stage measurements in caches.
std::string stage_signature(const Stage& stage);

}  // namespace iostune
