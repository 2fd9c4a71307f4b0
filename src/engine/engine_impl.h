// Internals of Engine (engine.h), shared by the files that implement it, one concept each:
//   engine.cpp         the public API, stream lanes, stage and program launches, capture, I/O
//   memory_plan.cpp    weights in the plan's type and layout (shared between engines or not),
//                      and the memory plan (src/memory_planner.h) made real: the I/O region,
//                      the shared region's arena, views, workspaces, re-planning on prepare()
//   conv_planner.cpp   how each convolution runs: a pinned, cached or timed choice
//   op_plans.cpp       each op's execution plan and launch
//   deployed_ops.cpp   the same for the operators of deployed CNNs (activation, binary, resize, ...)
//   merge_stages.cpp   operator-merge stages: stacked weights, merged outputs, where they live;
//                      batched merges (batched_sepconv.h) and their members
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "src/engine/batched_sepconv.h"
#include "src/engine/conv_step.h"
#include "src/engine/conv_transpose_step.h"
#include "src/engine/cublas_handle.h"
#include "src/engine/cuda_event.h"
#include "src/engine/cuda_stream.h"
#include "src/engine/cudnn_descriptors.h"
#include "src/engine/cudnn_handle.h"
#include "src/engine/device_arena.h"
#include "src/engine/device_buffer.h"
#include "src/engine/engine.h"
#include "src/engine/kernels.h"
#include "src/engine/tensor_view.h"
#include "src/memory_planner.h"
#include "src/engine/perturbation.h"
#include "src/stream_program.h"

namespace iostune::engine_internal {

// A stream with its own cuDNN and cuBLAS handles. Its cuDNN/cuBLASLt workspace is not its own:
// a program's launches use their workspace slot's (MemoryPlan::workspace_slot), single ops and
// stages the slot of their lane's index (Impl::workspaces).
// A launch with a priority (Launch::priority) is enqueued on the lane's stream of that priority;
// the lane's launches stay in order, each stream switch handed over by `handoff` (in a capture,
// an edge and nothing more).
struct Lane {
    CudaStream stream;
    CudnnHandle cudnn;
    CublasHandle cublas;
    DeviceBuffer cublas_workspace{size_t(kCublasWorkspaceBytes)};
    CudaEvent joined;  // recorded on `stream` when its group of a stage is done
    std::vector<CudaStream> urgent;  // urgent[k - 1]: the stream of priority level k
    CudaEvent handoff;
};

struct OpWeights {
    DeviceBuffer weight, weight2, bias;  // weight2: SepConv's pointwise weights
    DeviceBuffer slope;  // a PRelu's slopes, or those of a convolution with a fused PReLU
    // A depthwise filter as [kernel_h, kernel_w, channels], for the engine's channels-last
    // depthwise kernel (SepConv's depthwise part, a Conv with groups = channels).
    DeviceBuffer depthwise;
    size_t bytes() const {
        return weight.bytes() + weight2.bytes() + bias.bytes() + depthwise.bytes();
    }
};

// The scratch an op's plan uses, in the memory plan's regions (null: none).
struct ScratchPointers {
    void* depthwise_output = nullptr;
    void* staged_input = nullptr;
    void* staged_output = nullptr;
    bool operator==(const ScratchPointers&) const = default;
};

struct OpExec {
    std::vector<ConvStep> convs;  // Conv: 1; SepConv: depthwise, pointwise
    std::optional<TensorDescriptor> x_desc, y_desc;  // cuDNN pooling / softmax
    std::optional<PoolingDescriptor> pool_desc;
    PoolWindow window;
    std::vector<int> concat_copies;  // indexes of Concat inputs not written in place
    std::optional<ConvTransposeStep> conv_transpose;
    // In the memory plan: SepConv's depthwise output (the pointwise conv reads it), packed copies
    // of strided views (ConvTranspose's, a channels-last Linear's input, convolutions' staging).
    ScratchPointers scratch;
    std::vector<TensorView> planned_views;  // inputs then output, as planned
    OpPlan plan;
};

struct MergeExec {
    // A batched merge (MergeKind::Batched): its launches, or none when its ops cannot run
    // batched (another layout): then they run one after the other, each its own plan.
    std::optional<BatchedSepConv> batched;
    // A stacked merge (MergeKind::Stacked): the stacked weights and the one convolution.
    DeviceBuffer weight, bias, slope;
    // The stacked output: in the memory plan when the plan holds the stage, else its own.
    DeviceBuffer own_output;
    TensorView merged;
    void* staged_input = nullptr;  // the plan's packed copy of a strided input, if any
    ConvSpec spec;
    TensorView planned_input;
    std::optional<ConvStep> conv;
    std::vector<TensorView> slices;  // each merged op's channels of `merged`
    MergePlan plan;
};

// "running op 3 'conv1' (Conv)": the context of every error an op's launch or plan raises.
std::string op_label(const Op& op);

// A convolution must not run with a smaller workspace than it was planned for (it would write
// past the end): an internal error instead, checked on the host at launch.
void require_workspace(const ConvStep& step, const DeviceBuffer& workspace);

// Copies a (possibly channel-sliced) view into another of equal shape and storage.
void copy_view(const TensorView& src, const TensorView& dst, cudaStream_t stream,
               const std::string& context);

}  // namespace iostune::engine_internal

namespace iostune {

// The device copy of one model's weights in one precision and layout, shared by the engines
// that run it (engine.h: EngineOptions::weights).
struct EngineWeights {
    std::vector<engine_internal::OpWeights> ops;  // one per op
    // The model's fingerprint, precision, layout, stored input channels and a checksum of the
    // values: engines may share these weights only when theirs is the same.
    std::string key;
    size_t bytes() const {
        size_t total = 0;
        for (const auto& w : ops) total += w.bytes();
        return total;
    }
};

struct Engine::Impl {
    using Lane = engine_internal::Lane;
    using OpWeights = engine_internal::OpWeights;
    using OpExec = engine_internal::OpExec;
    using MergeExec = engine_internal::MergeExec;
    using ScratchPointers = engine_internal::ScratchPointers;

    Graph graph;
    EngineOptions options;
    TensorLayout layout = TensorLayout::Nchw;
    DType dtype = DType::F32;
    cudnnMathType_t conv_math = CUDNN_DEFAULT_MATH;
    cublasMath_t blas_math = CUBLAS_DEFAULT_MATH;

    std::shared_ptr<const EngineWeights> weights;
    // The memory plan in force (src/memory_planner.h): planned for options.schedule or without a
    // schedule at construction, for the schedule of each prepare() after.
    MemoryPlan memory_plan;
    DeviceBuffer io_region;              // the plan's I/O region (the same for every plan)
    std::shared_ptr<DeviceArena> arena;  // its shared region: the engine's own, or given
    bool arena_given = false;            // options.arena: fixed size, never replaced
    // A CUDA graph was captured since the last release_retired(): what the engine holds may be
    // used by it, so what a new plan replaces is kept (retired), since the caller may launch it
    // again.
    bool captured = false;

    // Each graph input: the caller's float NCHW buffer (float_io) and the input as ops read it;
    // when the engine's storage is float NCHW itself, the float buffer is the native input and
    // no conversion runs. Both live in the I/O region.
    struct InputPort {
        TensorView float_view;
        TensorView view;          // native, with the padded channels (what convolutions read)
        TensorView logical_view;  // its first graph.input_shape(k).c channels
        bool convert = false;
    };
    // Each graph output: its op, and the caller's float NCHW copy when the storage differs.
    struct OutputPort {
        int op = 0;
        TensorView float_view;
        bool convert = false;
    };
    std::vector<InputPort> input_ports;
    std::vector<OutputPort> output_ports;
    InputPort& input_port(int index);
    const OutputPort& output_port(int index) const;
    // Where each op's output lives under the plan (its buffer, a concat or merged slice, a view).
    std::vector<TensorView> views;
    std::vector<OpExec> execs;
    std::map<std::string, MergeExec> merges;

    std::vector<std::unique_ptr<Lane>> lanes;
    // cuDNN/cuBLASLt workspaces, each at least workspace_bytes: slot k of the plan's program, and
    // what single ops (slot 0) and group k of a stage (slot k) use.
    std::vector<DeviceBuffer> workspaces;
    size_t workspace_bytes = 0;
    CudaStream origin;
    CudaEvent forked;
    // One per launch of the largest stream program run so far: recorded after a launch that a
    // launch on another lane waits for (stream_program.h).
    std::vector<CudaEvent> launch_done;
    CublasLtHandle cublaslt;  // the 1x1 convolutions' matrix products (gemm_conv.h)
    DeviceBuffer l2_flush;  // written before each timed convolution run; freed after planning
    // Memory and re-planned convolutions kept for CUDA graphs captured under an earlier plan.
    std::vector<DeviceBuffer> retired;
    std::vector<std::shared_ptr<DeviceArena>> retired_arenas;
    std::vector<ConvStep> retired_steps;
    std::vector<ConvTransposeStep> retired_transposes;

    // What each set_conv_choice() not undone replaced, in order, for undo_conv_choice() (the
    // last first): each step (op, index in its convs) with its own choice before, and the pin
    // it replaced.
    struct ConvSwitch {
        std::string signature;
        std::vector<std::tuple<size_t, size_t, ConvChoice>> steps;
        std::optional<ConvChoice> pinned_before;
    };
    std::vector<ConvSwitch> switches;
    // Points the plans of the ops holding `signature` at what their steps run now.
    void record_conv_plans(const std::string& signature);

    Impl(Graph g, EngineOptions opt);

    // engine.cpp
    void ensure_lanes(size_t count);
    // The lane's streams of priority levels 1..level (Schedule::priorities), outside capture.
    void ensure_urgent(Lane& lane, int level);
    void ensure_workspaces(size_t count);
    void seed_workspace(const DeviceBuffer& w) const;
    void grow_workspaces();
    const TensorView& tensor(int id) const;
    void launch_stage(const Stage& stage, cudaStream_t origin_stream);
    void launch_schedule(const Schedule& schedule, cudaStream_t origin_stream,
                         const Perturbation* perturbation);
    // Each launch's workspace slot (see engine.cpp).
    std::vector<int> workspace_slots(const Schedule& schedule, const StreamProgram& program) const;
    // Lanes, merged weights, workspaces and events a program needs (outside capture only).
    void prepare_program(const StreamProgram& program, const std::vector<int>& slots,
                         cudaStream_t stream);
    // `perturbation`: the check mode's spin kernels (perturbation.h); nullptr in production.
    void launch_program(const StreamProgram& program, const std::vector<int>& slots,
                        cudaStream_t origin_stream, const Perturbation* perturbation = nullptr);
    void launch_input_conversion(cudaStream_t stream) const;
    void launch_output_conversion(cudaStream_t stream) const;
    void check_op_id(int id) const;
    void require_not_capturing(cudaStream_t stream, const std::string& what) const;
    void prepare_stage(const Stage& stage, cudaStream_t stream);
    HostTensor read_view(const TensorView& v, const std::string& what);
    // The schedule runs on the current plan: planned for it, or planned without reuse (any
    // schedule is safe there). Otherwise it is planned for it first (outside capture only).
    void require_plan_for(const Schedule& schedule, cudaStream_t stream);
    // The plan for `schedule` in force (made unless it already is), and audited.
    void plan_for(const Schedule& schedule);
    // The caller's float NCHW input copied in and converted into the engine's storage.
    void write_input(int index, const HostTensor& input);

    // memory_plan.cpp
    TensorView packed(void* data, const Shape& s) const;  // in the engine's type and layout
    DeviceBuffer allocate(const Shape& s) const;           // for one packed tensor of this shape
    // A filter [k, c, r, s] given as float KCRS, stored in the engine's type and layout with
    // `stored_channels` >= c input channels (the extra ones zero). upload_filter is for what
    // tensor cores may read (rounded to nearest in TF32); upload_packed stores values as given.
    DeviceBuffer upload_filter(const std::vector<float>& kcrs, int k, int c, int r, int s,
                               int stored_channels, const std::string& what) const;
    DeviceBuffer upload_packed(const std::vector<float>& kcrs, int k, int c, int r, int s,
                               int stored_channels, const std::string& what) const;
    // A per-channel vector (bias, slope, scale, shift) and the depthwise kernel's filter: for
    // fp32 arithmetic, stored as given.
    DeviceBuffer upload_vector(const std::vector<float>& values, const std::string& what) const;
    DeviceBuffer upload_depthwise(const std::vector<float>& kcrs, int c, int kh, int kw,
                                  const std::string& what) const;
    std::string weights_key() const;
    void upload_weights();
    void use_weights(std::shared_ptr<const EngineWeights> shared);
    const OpWeights& weights_of(int op_id) const { return weights->ops[size_t(op_id)]; }
    MemoryPlanOptions plan_options() const;
    // What the planned convolutions stage (their chosen paths), and the plan made again with
    // staging scratch only there (once every convolution of the plan is chosen).
    StagingUse staging_use() const;
    void refine_staging();
    // Makes `next` the plan in force: the I/O region (first plan only), the arena, every view,
    // the merge stages' outputs, and each op's plan (pointed at its new places, or planned again
    // where more than the addresses changed); workspaces for its slots.
    void apply_plan(MemoryPlan next);
    void bind_arena(size_t bytes);
    void set_up_ports();
    // Where a buffer of the plan lives / a tensor at `place` of `shape`.
    void* address(int buffer) const;
    TensorView view_at(const TensorPlace& place, const Shape& shape) const;
    ScratchPointers scratch_of(int op_id) const;
    // Seeded uniform values (kernels.h: launch_fill_uniform) on the origin stream.
    void fill(void* data, int64_t elements, DType type, uint64_t seed) const;
    // Memory no graph captured under the current plan uses is freed; otherwise kept.
    void retire(DeviceBuffer buffer);
    void retire(ConvStep step);

    // conv_planner.cpp
    ConvStep plan_conv(const std::string& context, const TensorView& in, const TensorView& out,
                       const ConvSpec& spec, ConvStaging staging = {});
    bool configure(ConvStep& step, const ConvChoice& choice, DeviceBuffer* scratch = nullptr);
    std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked_algorithms(ConvStep& step,
                                                                 const std::string& process_key);
    double time_step(const ConvStep& step, DeviceBuffer& workspace);
    // time_step's measurement of any launch that takes a workspace of `launch_workspace` bytes.
    double time_launch(const std::function<void(cudaStream_t, void*)>& launch,
                       size_t launch_workspace, DeviceBuffer& workspace, const std::string& what);
    // Two copies of the step at once on lanes 0 and 1 (ConvObjective::CoRun).
    double time_pair(const ConvStep& step, DeviceBuffer& workspace,
                     DeviceBuffer& second_workspace);
    // The median of timed launches of `exec` on `stream`, each after an L2 flush.
    double median_launch_ms(const CudaGraphExec& exec, cudaStream_t stream);
    bool choose_by_timing(ConvStep& step, const std::string& process_key);
    // Past EngineOptions::time_convolutions_by: a few cheap candidates timed (engine.h says
    // which), the fastest configured and marked quick; false when none runs here.
    bool choose_quickly(ConvStep& step);
    void require_planning_time(const std::string& context) const;
    // Convolutions chosen so far of the engine's total, since `begin` (the constructor's plan
    // loop keeps it): require_planning_pace judges by it.
    struct PlanningProgress {
        SteadyClock::time_point begin;
        int planned = 0;
        int total = 0;
    };
    PlanningProgress planning_progress;
    // Past half of EngineOptions::choose_by's time at a pace that cannot finish (planning_pace.h):
    // PlanningTooSlow. Checked after each op and, within one, wherever require_planning_time is:
    // one op's choice can take seconds (NASNet-A's NCHW depthwise convolutions), and the [pace]
    // test once stopped at 20.004 s of its 20 when the check came only between ops (call125).
    void require_planning_pace() const;
    void ensure_l2_flush();  // allocates l2_flush (twice the L2 size) on first use
    void record_conv(OpPlan& plan, const ConvStep& step);

    // deployed_ops.cpp: times cuDNN's legacy backward-data algorithm against the graph API's
    // shortlist and configures the step with the fastest; false when none runs.
    bool choose_conv_transpose(ConvTransposeStep& step);

    // op_plans.cpp
    std::vector<TensorView> current_views(const Op& op) const;
    // `planned`, or an internal error naming the op when the memory plan holds no such scratch.
    void* scratch_buffer(void* planned, const Op& op, const char* what) const;
    TensorView depthwise_output(const Op& op) const;  // a SepConv's, in its scratch
    void plan_op(const Op& op);
    bool rebind_convs(const Op& op, const std::vector<TensorView>& now);
    // After a plan change: the op's convolutions pointed at its new places when only addresses
    // changed, else the op planned again.
    void replan_op(const Op& op);
    void run_op(int id, Lane& lane, const DeviceBuffer& workspace, cudaStream_t stream);

    // deployed_ops.cpp
    void plan_deployed_op(const Op& op);
    void run_deployed_op(const Op& op, Lane& lane, const DeviceBuffer& workspace,
                         cudaStream_t stream);

    // merge_stages.cpp
    MergeExec& plan_merge(const Stage& stage);
    void run_merge(const MergeExec& m, Lane& lane, const DeviceBuffer& workspace,
                   cudaStream_t stream);
    // The stacked output's place under the current plan (its buffer, or one of its own).
    TensorView merged_place(MergeExec& m, const Shape& shape);
    // After a plan change: each merge stage's output moved to its new place.
    void replace_merges();
    // A batched merge pointed at its members' places under the current plan.
    void bind_batched(MergeExec& m);
};

}  // namespace iostune
