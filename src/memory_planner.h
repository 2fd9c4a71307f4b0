// The memory plan: where every activation, scratch buffer and graph input/output of a schedule
// lives, computed on the CPU once the schedule is fixed (docs/memory.md).
//
// Two regions. The I/O region holds what must outlive a launch or be written before it: the
// graph's inputs (as ops read them, and the caller's float NCHW copies) and every buffer that
// holds a graph output (and the caller's float NCHW copies of the outputs). Nothing there is
// reused, and its layout depends on the graph only, never on the schedule, so the caller's
// pointers stay valid when another schedule is prepared. The shared region holds everything
// else: op outputs (a producer whose only consumer is a Concat writes its channel slice of the
// concat's buffer; a ChannelSlice is a view of its input's buffer), the stacked outputs of merge
// stages (their ops live in their channel slices unless their home is a concat slice or holds a
// graph output), and per-op scratch: a SepConv's depthwise result, packed copies of strided
// views cuDNN reads or writes (staged inputs and outputs, a channels-last Linear's input).
//
// Reuse: two buffers of the shared region may share bytes only when every access of one happens
// before every access of the other in the schedule's StreamProgram (data, stream order,
// events): buffers of launches that may run at the same time never share. Offsets are assigned
// by TFLite's "greedy by size" heuristic (offset_assignment.h). Every buffer starts at a multiple
// of kPlanAlignment bytes, so a tensor keeps the alignment the convolution planner chose for.
//
// Workspaces: the program's launches that run a convolution get a workspace slot each; two
// launches share a slot only when one happens before the other, so there are as many workspaces
// as convolutions can run at once (at most the lanes), not one per lane or per op. Their size is
// the GPU's choice (the largest workspace of the chosen algorithms): on the CPU it is estimated.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/graph.h"
#include "src/precision.h"
#include "src/schedule.h"
#include "src/stream_program.h"
#include "src/tensor_layout.h"

namespace iostune {

inline constexpr int64_t kPlanAlignment = 256;
// cuBLAS's workspace per stream lane (the engine's, for Linear ops).
inline constexpr int64_t kCublasWorkspaceBytes = int64_t(8) << 20;
// The largest cuDNN/cuBLASLt workspace a convolution's algorithm may take (per workspace slot):
// EngineOptions::max_workspace_bytes by default.
inline constexpr int64_t kDefaultWorkspaceCapBytes = int64_t(256) << 20;

enum class BufferKind {
    Input,        // a graph input as ops read it (its padded channels included)
    InputFloat,   // the caller's float NCHW input, converted into Input by every launch
    Activation,   // an op's output (with its in-place concat producers' slices)
    Merged,       // a merge stage's stacked output
    Scratch,      // an op's scratch: depthwise result, staged input or output
    OutputFloat,  // the caller's float NCHW copy of a graph output
};
const char* to_string(BufferKind kind);

struct PlannedBuffer {
    std::string name;  // for messages: "output of op 12 'conv3'"
    BufferKind kind = BufferKind::Activation;
    Shape shape;        // the tensor it holds (logical NCHW extent)
    int64_t bytes = 0;  // shape's elements x element size, rounded up to kPlanAlignment
    bool pinned = false;  // in the I/O region: never shares bytes
    int64_t offset = 0;   // in its region, a multiple of kPlanAlignment
    int op = -1;          // the op whose output or scratch it is; -1 for inputs and merges
};

// Where a tensor lives: channels [first_channel, first_channel + its C) of a buffer.
struct TensorPlace {
    int buffer = -1;
    int first_channel = 0;
    bool operator==(const TensorPlace&) const = default;
};

// Scratch buffers of one op (ids into MemoryPlan::buffers; -1: none).
struct OpScratch {
    int depthwise_output = -1;  // SepConv: the depthwise result its pointwise convolution reads
    // A packed copy of a strided input (or of a SepConv's input with its pre-ReLU applied) for
    // cuDNN, cuBLAS (a channels-last Linear) or a transposed convolution.
    int staged_input = -1;
    int staged_output = -1;  // a packed result, copied into a strided output
};

struct MergePlacement {
    std::string signature;  // stage_signature()
    std::vector<int> ops;
    int buffer = -1;        // the stacked output [N, sum C, H, W]
    int staged_input = -1;  // a packed copy of a strided input
};

// The staging the engine's chosen convolutions really use: a plan given it reserves staging
// scratch only there. The engine knows once its convolutions are chosen (a timed choice: a
// kernel that reads and writes strided views in place stages nothing) and plans again with it;
// on the CPU every convolution that may stage gets its scratch.
struct StagingUse {
    // Per op: its convolution stages its input (a SepConv: its depthwise step) / its output.
    std::vector<bool> input, output;
    std::map<std::string, bool> merge_input;  // per merge stage signature
};

struct MemoryPlanOptions {
    Precision precision = Precision::Tf32;
    TensorLayout layout = TensorLayout::Nchw;
    bool concat_in_place = true;      // EngineOptions::concat_in_place
    bool pad_input_channels = false;  // EngineOptions::pad_input_channels
    // Buffers share bytes by liveness; off: every buffer has bytes of its own (any op's output
    // can be read after a launch, any schedule runs on the plan).
    bool reuse = true;
    std::optional<StagingUse> staging;  // unset: staging scratch wherever a convolution may stage
};

struct MemoryPlan {
    MemoryPlanOptions options;
    std::optional<Schedule> schedule;  // what it was planned for; none: no schedule, no reuse
    std::vector<PlannedBuffer> buffers;
    std::vector<TensorPlace> op_places;     // each op's output
    std::vector<TensorPlace> input_places;  // each graph input, as ops read it
    // Each graph input's float NCHW buffer: the Input buffer itself when the storage is float
    // NCHW without padded channels.
    std::vector<int> input_float;
    // Each graph output's float NCHW copy; -1 when the op's own view is float, NCHW and packed.
    std::vector<int> output_float;
    std::vector<OpScratch> scratch;  // each op's
    std::vector<MergePlacement> merges;
    // Each launch of the schedule's StreamProgram: its workspace slot, -1 when it runs no
    // convolution. Empty without a schedule.
    std::vector<int> workspace_slot;
    int workspace_slots = 0;
    int lanes = 0;  // the program's stream lanes
    int64_t shared_bytes = 0;  // the shared region
    int64_t io_bytes = 0;      // the I/O region
    // The largest set of buffers live at one point of the program's launch order (the I/O
    // region, which is live throughout, included): no plan of these buffers in that order can
    // be smaller.
    int64_t lower_bound_bytes = 0;

    int64_t activation_bytes() const { return shared_bytes + io_bytes; }
    const MergePlacement* merge(const std::string& signature) const;
    // The buffer's channels that a tensor of `shape` at `place` covers: all of them (packed) or
    // a strided channel slice.
    bool packed(const TensorPlace& place, const Shape& shape) const;
    // Where op or graph input `id` (graph.h's tensor ids) lives.
    const TensorPlace& place_of(int id) const;
    // "output of op 12 'conv3' (shared bytes [0, 4096))", for messages.
    std::string describe(int buffer) const;
};

// The plan for `schedule` (validated on the way). Deterministic: the same graph, schedule and
// options give the same plan. Throws iostune::Error for a schedule that is not valid for the
// graph.
MemoryPlan plan_memory(const Graph& graph, const Schedule& schedule,
                       const MemoryPlanOptions& options);

// The plan before any schedule is known (an engine that only runs single ops and stages, or
// measures them for the search): every buffer has bytes of its own, so every schedule, stage
// and op runs safely on it and every op's output can be read after it ran.
MemoryPlan plan_memory_without_schedule(const Graph& graph, const MemoryPlanOptions& options);

// A lower bound on the plan's arena that no offset assignment can beat for `program` (the plan's
// schedule's, or another's for comparison): at each launch, the heaviest set of shared buffers
// that may be live then and are pairwise in conflict (found greedily, largest first), plus the
// I/O region. Where the plan is close to it, the rest of its size is the program's concurrency,
// not the heuristic: only fewer buffers live at once (less overlap) can lower it.
int64_t concurrency_lower_bound(const Graph& graph, const MemoryPlan& plan,
                                const StreamProgram& program);

// Bytes of the weights the engine uploads for the graph (and the stacked weights of the
// schedule's merge stages, when given) in the precision's type and the layout's form: what
// Engine::memory() reports as weight bytes.
int64_t weight_bytes(const Graph& graph, const MemoryPlanOptions& options,
                     const Schedule* schedule = nullptr);

// An estimate of the workspace bytes the plan's launches need on the GPU, from the CPU: each
// workspace slot at the per-lane cap (what cuDNN's algorithms may take at most, the engine's
// max_workspace_bytes) plus cuBLAS's per lane. The engine's real figure is its chosen
// algorithms' largest workspace per slot (Engine::memory()).
int64_t workspace_bytes_estimate(const MemoryPlan& plan, int64_t cap_per_slot);

}  // namespace iostune
