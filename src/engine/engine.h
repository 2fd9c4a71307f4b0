// The execution engine: runs a Graph on one NVIDIA GPU through cuDNN, cuBLAS and a few kernels
// of its own, one stage of a Schedule at a time or as one captured CUDA Graph.
//
// Plan once, run trivially. The constructor uploads the weights (seeded random ones if the graph
// has none) in the precision's storage type and the plan's layout (or takes another engine's:
// EngineOptions::weights), places every activation by a memory plan (src/memory_planner.h;
// docs/memory.md), builds every descriptor and chooses how each convolution runs by timing
// cuDNN's best few algorithms on the real path, fused or not, per math type (once per shape
// within the process; a stored choice can be pinned through EngineOptions::conv_choices).
// Launches then only enqueue work: no allocation, no synchronisation, so they can be captured
// into a CUDA Graph.
//
// Memory. Inputs and outputs live in the engine's I/O region, which never changes. Everything
// else lives in one arena laid out by the memory plan in force: planned without a schedule
// (every activation its own bytes: any op, stage or schedule runs on it, and any op's output can
// be read after it ran), or for a schedule (EngineOptions::schedule at construction, or
// prepare()/capture() later): activations, scratch and merged outputs then share bytes wherever
// the schedule's stream program orders their uses, and read_op_output() is meaningful only for
// ops whose bytes no later launch of that schedule reuses (graph outputs always are). An op or a
// stage launched on its own under a schedule's plan reads what the last launch left. Once its
// convolutions are chosen the engine plans again with staging scratch only where a chosen kernel
// stages (the CPU's plan reserves it wherever one may), so it holds at most that. prepare()
// of another schedule plans again: views move, convolutions are pointed at their new places
// (planned again only where shapes or alignments change) and CUDA graphs captured earlier stay
// valid (a capture keeps the memory it used; release_retired() frees it). Before every schedule
// is prepared its plan is audited on the CPU (src/memory_audit.h): two launches that may run at
// the same time never touch the same bytes. Memory nothing wrote yet (the arena, the I/O
// region, the inputs) is filled with seeded values (EngineOptions::fill_seed), as trtexec does.
//
// Precision and layout (the plan): fp32/tf32 store float activations, fp16/bf16 store 16-bit
// ones and accumulate in float; activations are NCHW or NHWC (EngineOptions::layout, by default
// default_layout(precision)). The caller's input and output stay float NCHW: a schedule's launch
// converts the input first and the output last, inside the captured graph, unless
// EngineOptions::float_io is off (then the caller reads and writes native_input()/native_output()
// in the engine's own storage, with no conversion). An RGB input (3 channels, which tensor-core
// kernels dislike) runs on cuDNN's kernels for it; EngineOptions::pad_input_channels stores it
// zero-padded to 8 channels instead, with zero filter channels to match.
//
// Streams: launch_op() runs on the stream it is given with lane 0's cuDNN/cuBLAS handles. A
// concurrent stage runs group i on the engine's internal stream i (lane i, with its own cuDNN
// handle and workspace slot i, since concurrent convolutions must not share one), forked from and
// joined back into the origin stream with events. A schedule's launches take the workspace slot
// its memory plan gives them: as many workspaces as convolutions may run at once. Using one
// Engine from several host threads at once is not supported.
//
// Sharing across engines (docs/memory.md): engines of one model at several batch sizes, or of
// models that run one after another, can share one copy of the weights (EngineOptions::weights
// = other.weights()) and one arena (EngineOptions::arena, sized with plan_memory_for()), as long
// as the caller orders their launches.
//
// Typical use (profiler, replay):
//   Engine engine(graph, {Precision::Tf32});
//   engine.set_input(image);
//   CudaGraphExec exec = engine.capture(schedule);   // warms up, captures, instantiates
//   exec.launch(stream);  ...  HostTensor y = engine.read_output();
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/conv_choices.h"
#include "src/error.h"
#include "src/engine/cuda_graph.h"
#include "src/engine/perturbation.h"
#include "src/engine/device_arena.h"
#include "src/engine/tensor_view.h"
#include "src/graph.h"
#include "src/memory_planner.h"
#include "src/precision.h"
#include "src/schedule.h"
#include "src/stopwatch.h"
#include "src/tensor.h"
#include "src/tensor_layout.h"

namespace iostune {

// The device copy of a model's weights in one precision and layout (engine_impl.h), shared by
// the engines that run it.
struct EngineWeights;

struct EngineOptions {
    // Tf32: like PyTorch's default, convolutions and GEMMs may use TF32 tensor cores.
    // Fp32: strict fp32 FMA kernels only (what the CPU reference is compared against).
    // Fp16, Bf16: 16-bit activations and weights (converted once at load), fp32 accumulation.
    Precision precision = Precision::Tf32;
    // Activation layout; unset: default_layout(precision).
    std::optional<TensorLayout> layout;
    // The caller's input and output are float NCHW (converted inside every schedule launch);
    // off: they are the engine's own storage (native_input()/native_output()), not converted.
    bool float_io = true;
    // Zero-pad an input whose channels are not a multiple of 8 (RGB) to the next multiple of 8
    // in NHWC 16-bit storage, when only convolutions read it. Off: on the H100 (cuDNN 9.19) the
    // padded stem convolution and conversion ran ~50 us slower at batch 16 than cuDNN's kernels
    // for 3 channels (ResNet-50 fp16 sequential 0.890 vs 0.807 ms, 2026-11-22).
    bool pad_input_channels = false;
    int device = 0;
    // Largest cuDNN workspace an algorithm may need to be chosen (per stream lane).
    size_t max_workspace_bytes = size_t(kDefaultWorkspaceCapBytes);
    // Producers whose only consumer is a Concat write into their slice of its output.
    bool concat_in_place = true;
    uint64_t weight_seed = 1;  // for init_random_weights when the graph has no weights
    // Convolution choices to reuse instead of timing candidates (a stored schedule's, so a replay
    // runs the kernels its search measured). A choice that cannot run here is timed afresh.
    ConvChoices conv_choices = {};
    // How the convolutions that are not pinned are chosen (conv_choices.h).
    ConvObjective conv_objective = ConvObjective::Alone;
    // The schedule the engine is built for: memory is planned for it from the start, so the
    // engine never holds every activation at once, and prepare()/capture() of it plan nothing
    // more. Unset: planned without a schedule until prepare().
    std::optional<Schedule> schedule = std::nullopt;
    // Activations share bytes by the prepared schedule's liveness. Off: every activation keeps
    // its own bytes under every schedule (read_op_output() of any op after any launch; the
    // memory of all activations at once).
    bool reuse_memory = true;
    // The arena for the plan's shared region (device_arena.h), shared with other engines that
    // never run at the same time as this one; it must hold every plan this engine uses
    // (plan_memory_for(...).shared_bytes), else the plan is refused. Unset: the engine's own.
    std::shared_ptr<DeviceArena> arena = nullptr;
    // Bytes the engine's own arena leaves unused before its region, a multiple of 256: every
    // activation then lies that much further on (a diagnostic of how much latency depends on
    // where the buffers land: `replay --arena-offset`). Ignored with a given arena.
    size_t arena_offset = 0;
    // How far place_arena() may move the region later (a multiple of 256; allocated past it).
    size_t arena_room = 0;
    static constexpr size_t kArenaOffsetAlignment = 256;
    // Weights another engine uploaded (Engine::weights()) for the same model (same structure and
    // values), precision and layout, e.g. the same model at another batch size: used instead of
    // a copy of this engine's own. Refused when they are not this graph's.
    std::shared_ptr<const EngineWeights> weights = nullptr;
    // Seed of the values the engine fills its memory and inputs with when it allocates them.
    uint64_t fill_seed = 7;
    // A convolution (or one of its candidates) that would be timed after this instant is not:
    // the engine throws PlanningDeadline instead. It bounds a probe (the search's layout
    // choice), whose engine would otherwise take as long as its convolutions take to time
    // (NASNet-A in NCHW: minutes).
    std::optional<SteadyClock::time_point> choose_by = std::nullopt;
    // A convolution planned after this instant is chosen quickly (conv_planner.cpp,
    // choose_quickly): the engine's own paths, cuDNN's first few legacy algorithms by its
    // heuristic and, for an ungrouped convolution, the graph API's first configurations are
    // timed; no cudnnFind run, no run-time compiled engine; its ConvChoice is marked `quick`. A
    // search sets it at its share of the time budget for choosing kernels (tuning/tuning_job.h):
    // timing every candidate of EfficientNet-B1's 115 convolutions (batch 3, 201 px, TF32) took
    // 45 s of a 20 s budget (call175). Unset, or with choose_by set: every one is timed in full.
    std::optional<SteadyClock::time_point> time_convolutions_by = std::nullopt;
};

// Thrown while an engine is planned past EngineOptions::choose_by.
class PlanningDeadline : public Error {
public:
    using Error::Error;
};

// Thrown at half of EngineOptions::choose_by's time when the engine's pace of choosing
// convolutions says it cannot finish by then (planning_pace.h); what() says why, for a user.
class PlanningTooSlow : public PlanningDeadline {
public:
    using PlanningDeadline::PlanningDeadline;
};

// Device memory an engine holds, by purpose, in bytes.
struct EngineMemory {
    size_t weights = 0;          // the model's weights (shared ones too: see weights_shared)
    bool weights_shared = false;  // they came from another engine (EngineOptions::weights)
    size_t merged_weights = 0;   // stacked weights of the merge stages planned so far
    size_t io = 0;               // the I/O region: inputs and outputs (memory_planner.h)
    size_t arena = 0;            // the arena of the shared region, all of it
    bool arena_shared = false;   // given (EngineOptions::arena), possibly used by other engines
    size_t workspaces = 0;       // cuDNN/cuBLASLt workspace slots and each lane's cuBLAS one
    // Outside the plan: outputs of merge stages run without being planned, staging buffers of
    // their convolutions, memory kept for CUDA graphs captured under earlier plans, the bytes
    // an arena offset and its room leave unused (EngineOptions::arena_offset, arena_room).
    size_t other = 0;
    size_t total() const;
};

// How the engine runs one op: for logs, reports and tests.
struct OpPlan {
    int op_id = 0;
    std::string name;
    OpKind kind = OpKind::Identity;
    // e.g. "cudnnConvolutionBiasActivationForward", "cudnnConvolutionForward + bias/relu kernel",
    // "cudnnPoolingForward", "pool kernel (ceil_mode)", "concat: 2 in place, 1 copied".
    std::string path;
    std::string algorithms;      // chosen cuDNN algorithm(s), "" when none
    std::string storage;         // "half nhwc", "float nchw": what its output is stored as
    // How its convolutions were chosen: cuDNN's ranking and each timed variant's time, e.g.
    // "find: IMPLICIT_PRECOMP_GEMM 0.012 ms TENSOR_OP_MATH, ...; timed: ... 0.015 ms, ..."
    // ("pinned" or "cached" when not timed here); one entry per convolution, " || " apart.
    std::string candidates;
    std::vector<std::string> conv_signatures;  // its convolutions' keys in ConvChoices
    size_t workspace_bytes = 0;  // largest workspace its convolutions need
    bool writes_into_concat = false;
};

// How the engine runs one merge stage.
struct MergePlan {
    std::string signature;  // stage_signature()
    std::vector<int> ops;
    int out_channels = 0;     // sum over the merged convolutions
    int kernel_h = 0, kernel_w = 0;
    std::string path;         // the convolution path, as in OpPlan
    std::string algorithms;
    // The merged output is one [N, sum C, H, W] buffer. Under the layout of the last prepare()d
    // schedule that holds this stage, each merged op lives in its channel slice and consumers
    // read the slice in place; an op whose output is a concat slice (or any op, when the stage
    // runs under another schedule's layout) gets its slice copied out. How many are copied now:
    int slice_copies = 0;
};

class Engine {
public:
    explicit Engine(Graph graph, EngineOptions options = {});
    ~Engine();
    Engine(Engine&&) noexcept;
    Engine& operator=(Engine&&) noexcept;
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    const Graph& graph() const;  // with the weights the engine runs
    const EngineOptions& options() const;
    TensorLayout layout() const;  // the resolved activation layout
    DType storage_type() const;   // of every activation and weight

    // Validates the schedule against the graph and plans what it needs: its memory plan (see
    // above: merged ops live in their slice of the merged output, and ops reading them read the
    // slice), stream lanes, workspaces and the merged weights of its merge stages; then audits
    // the plan (an internal error names two concurrent launches that would touch the same
    // bytes). read_op_output() follows the current plan. CUDA graphs captured earlier stay valid.
    void prepare(const Schedule& schedule);

    // Enqueue work on `stream` (or, for stages, on the internal lanes forked from `origin`).
    // A stage that was not prepared is planned on first use (outside capture only); so is a
    // schedule other than the one the memory is planned for, unless nothing is reused.
    void launch_op(int op_id, cudaStream_t stream);
    void launch_stage(const Stage& stage, cudaStream_t origin);
    void launch_schedule(const Schedule& schedule, cudaStream_t origin);

    // Runs every launch once (warm-up: algorithm choice, lazy module loading, handle set-up),
    // then captures the launches on the engine's own origin stream into one CUDA Graph and
    // instantiates it. Launch the exec on any stream; it reads the input buffer and writes every
    // op's output buffer, exactly as launch_schedule() would.
    CudaGraphExec capture(const Schedule& schedule);
    // Every activation from now on `offset` bytes into the arena's allocation (a multiple of
    // 256, at most EngineOptions::arena_room; not with a given arena), the plan and kernels
    // unchanged. Graphs captured before keep running where they were (the allocation holds
    // both). For timing a schedule at another placement: where buffers land may move latency.
    void place_arena(size_t offset);
    size_t arena_offset() const;  // where the region starts in its allocation
    // The same graph, not instantiated, for a caller that adds nodes to it; warm_up false
    // (after a capture of the same schedule): captured without running anything first.
    CudaGraph record(const Schedule& schedule, bool warm_up = true);
    CudaGraphExec capture_stage(const Stage& stage);
    // The check mode of perturbed replay (perturbation.h): the same graph with spin kernels
    // before chosen launches. Not for production: it is slower by design.
    CudaGraphExec capture_perturbed(const Schedule& schedule, const Perturbation& perturbation);
    // Fills the shared activation region with seeded values (synchronising): before a checked
    // run, a launch that reads a tensor its producer has not written yet then reads these
    // values, not the identical ones an earlier run left there.
    void refill_arena(uint64_t seed);
    // Fills every convolution workspace and each lane's cuBLAS workspace (synchronising) with
    // zeros (no seed) or seeded values. A diagnostic: no kernel may compute other values for
    // what its workspace held before it ran (tuning/output_divergence.h checks).
    void fill_workspaces(std::optional<uint64_t> seed);
    // What op `op_id` reads and writes now, as device address ranges, and checksums of its
    // weights as they are on the device: "weights [0x7f.., +540672) #3fa2..; conv: reads ...".
    // A diagnostic (it synchronises): two snapshots of one op that compute other values on the
    // same inputs either differ here or run the same kernel on the same bytes.
    std::string op_bindings(int op_id) const;
    cudaStream_t origin_stream() const;  // the stream capture uses; free to launch on
    // Enqueues a write of twice the L2 cache's size on `stream`, evicting whatever it held
    // (timing with cold caches). Allocates its buffer on first use: not inside a capture.
    void flush_l2(cudaStream_t stream);

    // Input/output. These synchronise the device (they are not on the hot path). set_input also
    // converts the input into the engine's storage, so single ops can run on it at once.
    // `index` picks one of a graph's several inputs or outputs (a model set's), 0 by default.
    void set_input(const HostTensor& input);  // shape must equal the graph's
    void set_input(int index, const HostTensor& input);
    HostTensor read_output(int index = 0);  // float NCHW, whatever the storage
    std::vector<HostTensor> read_outputs();  // every output, in the graph's order
    // Seeded uniform [-1, 1) data in every input (input k: random_input(shape, seed + k)), so
    // nothing is timed on zeros or uninitialised memory.
    void set_random_inputs(uint64_t seed);
    HostTensor read_op_output(int op_id);
    float* input_device(int index = 0);  // float NCHW, read by a schedule's launch (float_io)
    // Float NCHW, written by a schedule's launch (float_io).
    const float* output_device(int index = 0) const;
    // The graph's inputs and outputs in the engine's own storage (type, layout; the input's
    // padded channels included): what ops read and write, and the caller's buffers when
    // float_io is off. native_output() follows prepare()'s placement of merged ops.
    TensorView native_input(int index = 0) const;
    TensorView native_output(int index = 0) const;
    void synchronize();

    std::vector<OpPlan> op_plans() const;
    std::vector<MergePlan> merge_plans() const;
    size_t device_memory_bytes() const;  // memory().total()
    EngineMemory memory() const;
    const MemoryPlan& memory_plan() const;  // the plan in force
    int lane_count() const;
    // This engine's weights, to share with engines of the same model (EngineOptions::weights).
    std::shared_ptr<const EngineWeights> weights() const;
    // Frees what was kept for CUDA graphs captured under earlier plans; call only when none of
    // them will be launched again.
    void release_retired();

    // On the CPU, no GPU needed: the memory plan options an engine with `options` uses, and its
    // plan for `schedule` (what to size a shared arena with: MemoryPlan::shared_bytes).
    static MemoryPlanOptions memory_plan_options(const EngineOptions& options);
    static MemoryPlan plan_memory_for(const Graph& graph, const Schedule& schedule,
                                      const EngineOptions& options);

    // How each planned convolution runs (ops and merge stages), keyed by shape signature: what a
    // stored schedule keeps so another process can pin it (EngineOptions::conv_choices).
    ConvChoices conv_choices() const;
    // The ops' convolutions' runners-up (ConvStep::runners_up; per signature those of the step
    // conv_choices() reports), the first `ranks` (at most kMostRunnersUp): element k maps each
    // signature that has a k-th to it. What the search's kernel moves try beside the other
    // objective's choice.
    std::vector<ConvChoices> conv_runners_up(size_t ranks = kRunnersUp) const;
    int pinned_conv_count() const;  // planned convolutions that use a pinned choice
    int quick_conv_count() const;   // planned convolutions whose choice was made quickly
    int conv_count() const;         // planned convolutions (a SepConv has two)
    // Runs every op's convolution of `signature` (merge stages' aside) with `choice` from now on,
    // pinned (options().conv_choices holds it, for steps planned again): the search's kernel
    // moves (tuning/kernel_moves.h) try other timed kernels op by op on one engine.
    // False, and nothing changed, when the signature is no op's or the choice cannot run one of
    // them here (configure's refusals, or a staging buffer its path needs that the memory plan,
    // refined by the earlier choice, left out). CUDA graphs captured before keep the kernels they
    // captured; a larger workspace is grown at the next prepare or capture. Not during a capture.
    bool set_conv_choice(const std::string& signature, const ConvChoice& choice);
    // Puts back what the last successful set_conv_choice() not yet undone replaced, step by
    // step (steps of one signature may have run different choices), and its pin; called again,
    // the one before, and so on; nothing when there is none.
    void undo_conv_choice();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace iostune
