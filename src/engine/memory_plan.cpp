// The engine's memory: weights converted once to the plan's type and layout (or another
// engine's, shared), and the memory plan (src/memory_planner.h) made real: the I/O region, the
// arena of the shared region, every op's view, the merge stages' outputs and the workspaces,
// switched to another plan (another schedule) on prepare().
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "src/engine/engine_impl.h"
#include "src/memory_audit.h"
#include "src/model_json.h"
#include "src/operator_info.h"
#include "src/tf32.h"

namespace iostune {

namespace {

DeviceBuffer upload_floats(const std::vector<float>& host, const std::string& what) {
    DeviceBuffer buffer(host.size() * sizeof(float));
    if (!host.empty()) {
        // On the legacy stream, which converts it next (upload_filter): stream-ordered.
        IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(buffer.get(), host.data(), buffer.bytes(),
                                           cudaMemcpyHostToDevice, nullptr),
                           fmt::format("uploading {}", what));
    }
    return buffer;
}

// A checksum of every weight value (their bits): engines share weights only when theirs agree.
uint64_t weights_checksum(const Graph& graph) {
    uint64_t hash = 0xCBF29CE484222325ull;
    for (const auto& op_params : graph.params())
        for (const ParamTensor& p : op_params)
            for (float v : p.values) {
                uint32_t bits = 0;
                std::memcpy(&bits, &v, sizeof bits);
                hash = (hash ^ bits) * 0x100000001B3ull;
            }
    return hash;
}

// The I/O regions of two plans of one engine agree buffer by buffer (they depend on the graph
// and the options only).
bool same_io_region(const MemoryPlan& a, const MemoryPlan& b) {
    std::vector<std::pair<std::string, int64_t>> pa, pb;
    for (const PlannedBuffer& x : a.buffers)
        if (x.pinned) pa.emplace_back(x.name, x.offset);
    for (const PlannedBuffer& x : b.buffers)
        if (x.pinned) pb.emplace_back(x.name, x.offset);
    return a.io_bytes == b.io_bytes && pa == pb;
}

DType buffer_type(BufferKind kind, DType storage) {
    return kind == BufferKind::InputFloat || kind == BufferKind::OutputFloat ? DType::F32 : storage;
}

}  // namespace

TensorView Engine::Impl::packed(void* data, const Shape& s) const {
    return packed_view(data, dtype, layout, s.n, s.c, s.h, s.w);
}

DeviceBuffer Engine::Impl::allocate(const Shape& s) const {
    return DeviceBuffer(size_t(s.elements()) * size_t(dtype_bytes(dtype)));
}

DeviceBuffer Engine::Impl::upload_filter(const std::vector<float>& kcrs, int k, int c, int r, int s,
                                         int stored_channels, const std::string& what) const {
    // TF32 filters are rounded to nearest here, once, rather than truncated by the tensor-core
    // kernels that read them (src/tf32.h says why).
    if (options.precision != Precision::Tf32)
        return upload_packed(kcrs, k, c, r, s, stored_channels, what);
    std::vector<float> rounded = kcrs;
    for (float& v : rounded) v = round_to_tf32(v);
    return upload_packed(rounded, k, c, r, s, stored_channels, what);
}

DeviceBuffer Engine::Impl::upload_packed(const std::vector<float>& kcrs, int k, int c, int r,
                                         int s, int stored_channels,
                                         const std::string& what) const {
    const DeviceBuffer source = upload_floats(kcrs, what);
    DeviceBuffer stored = allocate(Shape{k, stored_channels, r, s});
    const TensorView target = packed(stored.get(), Shape{k, stored_channels, r, s});
    const std::string context = fmt::format("converting {}", what);
    if (stored_channels != c)
        IOSTUNE_CUDA_CHECK(cudaMemset(stored.get(), 0, stored.bytes()), context);
    // A filter is a [k, c, r, s] tensor: KCRS is its NCHW form, KRSC its NHWC form.
    launch_convert(packed_view(source.get(), DType::F32, TensorLayout::Nchw, k, c, r, s),
                   target.channels(0, c), nullptr);
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), context);  // before `source` is freed
    return stored;
}

DeviceBuffer Engine::Impl::upload_vector(const std::vector<float>& values,
                                         const std::string& what) const {
    // Biases, slopes, scales: read in fp32 by epilogues and pointwise kernels, never by tensor
    // cores, so never rounded to TF32 (PyTorch does not round them either).
    const int count = int(values.size());
    return upload_packed(values, 1, count, 1, 1, count, what);
}

// A depthwise filter [c, 1, kh, kw] (KCRS) as [kh, kw, c], for the channels-last depthwise kernel.
DeviceBuffer Engine::Impl::upload_depthwise(const std::vector<float>& kcrs, int c, int kh, int kw,
                                            const std::string& what) const {
    const size_t taps = size_t(kh) * size_t(kw);
    std::vector<float> rsc(kcrs.size());
    for (size_t ch = 0; ch < size_t(c); ++ch)
        for (size_t t = 0; t < taps; ++t) rsc[t * size_t(c) + ch] = kcrs[ch * taps + t];
    // The channels-last depthwise kernel computes in fp32 FMA: its filter is not rounded to TF32
    // (a rounded one made EfficientNet-B0's TF32 error 0.0110 against 0.0071 in a CPU emulation;
    // docs/search-log.md, "The batch-1 and batch-16 rows on one binary").
    return upload_vector(rsc, what + " (depthwise kernel)");
}

std::string Engine::Impl::weights_key() const {
    std::string inputs;
    for (const InputPort& port : input_ports)
        inputs += fmt::format("{}{}", inputs.empty() ? "" : ",", port.view.c);
    return fmt::format("model {}, {} {}, input channels {}, weights {:016x}", fingerprint(graph),
                       to_string(options.precision), to_string(layout), inputs,
                       weights_checksum(graph));
}

void Engine::Impl::use_weights(std::shared_ptr<const EngineWeights> shared) {
    const std::string mine = weights_key();
    if (shared->key != mine || shared->ops.size() != size_t(graph.size()))
        throw Error(fmt::format("EngineOptions::weights hold the weights of another model, "
                                "precision or layout ({}), not those of '{}' ({}): share weights "
                                "only between engines of one model in one precision and layout",
                                shared->key, graph.name(), mine));
    weights = std::move(shared);
}

void Engine::Impl::upload_weights() {
    auto uploaded = std::make_shared<EngineWeights>();
    uploaded->ops.resize(size_t(graph.size()));
    for (const Op& op : graph.ops()) {
        const auto& params = graph.params_of(op.id);
        const std::string what = fmt::format("the weights of op {} '{}'", op.id, op.name);
        OpWeights& w = uploaded->ops[size_t(op.id)];
        const auto dims = param_shapes(graph, op.id);
        switch (op.kind) {
            case OpKind::Conv: {
                const auto& a = op.as<ConvAttrs>();
                const auto& d = dims.at(0);  // [Cout, Cin/groups, kh, kw]
                // A convolution of the (channel-padded) graph input reads every stored channel.
                const int stored =
                    is_graph_input(op.inputs[0])
                        ? input_ports[size_t(graph_input_index(op.inputs[0]))].view.c / a.groups
                        : d[1];
                w.weight = upload_filter(params.at(0).values, d[0], d[1], d[2], d[3], stored, what);
                if (a.bias) w.bias = upload_vector(params.at(1).values, what);
                if (a.prelu) w.slope = upload_vector(params.back().values, what);
                const int in_c = graph.tensor_shape(op.inputs[0]).c;
                if (layout == TensorLayout::Nhwc && a.groups == in_c && a.out_channels == in_c)
                    w.depthwise = upload_depthwise(params.at(0).values, in_c, d[2], d[3], what);
                break;
            }
            case OpKind::Linear: {
                // [out, C*H*W] over the input flattened in NCHW order: stored as a filter
                // [out, C, H, W], so the NHWC form matches a channels-last input's order.
                const Shape& in = graph.tensor_shape(op.inputs[0]);
                const int out = op.as<LinearAttrs>().out_features;
                w.weight = upload_filter(params.at(0).values, out, in.c, in.h, in.w, in.c, what);
                if (op.as<LinearAttrs>().bias) w.bias = upload_vector(params.at(1).values, what);
                break;
            }
            case OpKind::SepConv: {
                const auto& dw = dims.at(0);  // [Cin, 1, k, k]
                const auto& pw = dims.at(1);  // [Cout, Cin, 1, 1]
                w.weight = upload_filter(params.at(0).values, dw[0], dw[1], dw[2], dw[3], dw[1], what);
                w.weight2 = upload_filter(params.at(1).values, pw[0], pw[1], pw[2], pw[3], pw[1], what);
                if (layout == TensorLayout::Nhwc)
                    w.depthwise = upload_depthwise(params.at(0).values, dw[0], dw[2], dw[3], what);
                if (op.as<SepConvAttrs>().bias) w.bias = upload_vector(params.at(2).values, what);
                break;
            }
            case OpKind::ConvTranspose: {
                const auto& d = dims.at(0);  // [Cin, Cout/groups, kh, kw]: cuDNN's [k, c, r, s]
                w.weight = upload_filter(params.at(0).values, d[0], d[1], d[2], d[3], d[1], what);
                if (op.as<ConvTransposeAttrs>().bias)
                    w.bias = upload_vector(params.at(1).values, what);
                break;
            }
            case OpKind::ChannelAffine:  // scale, shift
            case OpKind::ChannelNorm:    // gamma, beta
            case OpKind::GroupNorm:      // gamma, beta
                w.weight = upload_vector(params.at(0).values, what);
                w.bias = upload_vector(params.at(1).values, what);
                break;
            case OpKind::PRelu:
                w.slope = upload_vector(params.at(0).values, what);
                break;
            default:
                break;
        }
    }
    uploaded->key = weights_key();
    weights = std::move(uploaded);
}

MemoryPlanOptions Engine::Impl::plan_options() const {
    return Engine::memory_plan_options(options);
}

void* Engine::Impl::address(int buffer) const {
    const PlannedBuffer& b = memory_plan.buffers.at(size_t(buffer));
    return static_cast<char*>(b.pinned ? io_region.get() : arena->data()) + b.offset;
}

TensorView Engine::Impl::view_at(const TensorPlace& place, const Shape& shape) const {
    const PlannedBuffer& b = memory_plan.buffers.at(size_t(place.buffer));
    return packed(address(place.buffer), b.shape).channels(place.first_channel, shape.c);
}

Engine::Impl::ScratchPointers Engine::Impl::scratch_of(int op_id) const {
    const OpScratch& s = memory_plan.scratch[size_t(op_id)];
    const auto at = [&](int buffer) { return buffer >= 0 ? address(buffer) : nullptr; };
    return {at(s.depthwise_output), at(s.staged_input), at(s.staged_output)};
}

void Engine::Impl::fill(void* data, int64_t elements, DType type, uint64_t seed) const {
    launch_fill_uniform(data, elements, type, seed, origin.get());
}

// Kept when a graph captured under the current plan may use it, else freed here.
void Engine::Impl::retire(DeviceBuffer buffer) {
    if (captured && buffer.bytes() > 0) retired.push_back(std::move(buffer));
}

// A step owns more than its buffers: a cuDNN graph-API plan of a runtime-compiled engine owns the
// kernel it compiled, and a CUDA graph captured under the current plan launches that kernel.
// Destroying the plan unloads it (such a graph then failed with an illegal address on the H100),
// so every step is kept while such a graph may run.
void Engine::Impl::retire(ConvStep step) {
    if (captured) retired_steps.push_back(std::move(step));
}

// The engine's own arena is replaced by one of the plan's size unless a CUDA graph captured
// under the current plan uses it and it is large enough (nothing in it is kept between
// launches, so that graph and the new plan may both use it). A given arena is never replaced.
void Engine::Impl::bind_arena(size_t bytes) {
    if (arena_given) {
        if (arena->bytes() < bytes)
            throw Error(fmt::format(
                "the shared arena given to the engine of '{}' holds {:.1f} MiB, and its memory "
                "plan needs {:.1f} MiB: create the arena with the largest MemoryPlan::shared_bytes "
                "of the engines sharing it (Engine::plan_memory_for)",
                graph.name(), double(arena->bytes()) / (1 << 20), double(bytes) / (1 << 20)));
        return;
    }
    if (arena && (arena->bytes() == bytes || (captured && arena->bytes() >= bytes))) return;
    if (arena && captured) retired_arenas.push_back(std::move(arena));
    arena.reset();  // freed before the new one is allocated: the peak stays one arena
    arena = std::make_shared<DeviceArena>(bytes, options.arena_offset, options.arena_room);
}

// Ports onto the I/O region; its buffers filled with seeded values (each in its own type), the
// padded channels of an input zero (nothing but this memset writes them).
void Engine::Impl::set_up_ports() {
    for (size_t b = 0; b < memory_plan.buffers.size(); ++b) {
        const PlannedBuffer& buffer = memory_plan.buffers[b];
        if (!buffer.pinned) continue;
        fill(address(int(b)), buffer.shape.elements(), buffer_type(buffer.kind, dtype),
             options.fill_seed + b);
    }
    input_ports.resize(size_t(graph.input_count()));
    for (int k = 0; k < graph.input_count(); ++k) {
        InputPort& port = input_ports[size_t(k)];
        const Shape& in_shape = graph.input_shape(k);
        const TensorPlace& place = memory_plan.input_places[size_t(k)];
        port.view = view_at(place, memory_plan.buffers[size_t(place.buffer)].shape);
        port.logical_view = port.view.channels(0, in_shape.c);
        port.convert = memory_plan.input_float[size_t(k)] != place.buffer;
        port.float_view =
            port.convert ? packed_view(address(memory_plan.input_float[size_t(k)]), DType::F32,
                                       TensorLayout::Nchw, in_shape.n, in_shape.c, in_shape.h,
                                       in_shape.w)
                         : port.view;
        const size_t bytes = size_t(port.view.elements()) * size_t(dtype_bytes(dtype));
        if (port.view.c != in_shape.c)
            IOSTUNE_CUDA_CHECK(cudaMemsetAsync(port.view.data, 0, bytes, origin.get()),
                               "clearing the engine's padded input channels");
    }
    const std::vector<int> outputs = graph.outputs();
    output_ports.clear();
    for (size_t k = 0; k < outputs.size(); ++k) {
        OutputPort port;
        port.op = outputs[k];
        const int copy = memory_plan.output_float[k];
        port.convert = copy >= 0;
        if (port.convert) {
            const Shape& out = graph.op(port.op).output;
            port.float_view = packed_view(address(copy), DType::F32, TensorLayout::Nchw, out.n,
                                          out.c, out.h, out.w);
        }
        output_ports.push_back(port);
    }
}

StagingUse Engine::Impl::staging_use() const {
    StagingUse use;
    use.input.assign(size_t(graph.size()), false);
    use.output.assign(size_t(graph.size()), false);
    for (const Op& op : graph.ops()) {
        const OpExec& e = execs[size_t(op.id)];
        if (!e.convs.empty()) {  // a SepConv's depthwise step reads, its pointwise one writes
            use.input[size_t(op.id)] = e.convs.front().input_staged();
            use.output[size_t(op.id)] = e.convs.back().output_staged();
        }
        // A transposed convolution planned again is timed again and may choose otherwise: its
        // scratch stays.
        if (op.kind == OpKind::ConvTranspose)
            use.input[size_t(op.id)] = use.output[size_t(op.id)] = true;
    }
    for (const auto& [signature, m] : merges)
        use.merge_input[signature] = m.conv && m.conv->input_staged();
    return use;
}

// The plan reserved staging scratch for every convolution that may stage; once they are chosen
// (timed, or pinned), the scratch of those that read and write their views in place is dropped.
// The convolutions are then pointed at the new places: the same shapes, strides and alignments.
void Engine::Impl::refine_staging() {
    if (memory_plan.options.staging) return;
    MemoryPlanOptions refined = memory_plan.options;
    refined.staging = staging_use();
    MemoryPlan next = memory_plan.schedule ? plan_memory(graph, *memory_plan.schedule, refined)
                                           : plan_memory_without_schedule(graph, refined);
    // A given arena was sized for the plan with every staging buffer (plan_memory_for). Packing
    // greedy by size is not monotone: fewer buffers may, rarely, take more bytes. Then the plan
    // in force (which reserves every staging buffer) stays.
    if (arena_given && size_t(next.shared_bytes) > arena->bytes()) return;
    apply_plan(std::move(next));
}

void Engine::Impl::apply_plan(MemoryPlan next) {
    // Audited before anything is bound to it (src/memory_audit.h): a plan whose buffers overlap
    // where they must not is an internal error naming both, never a convolution writing over
    // its own input (docs/search-log.md).
    if (next.schedule) audit_memory(graph, next, StreamProgram(graph, *next.schedule));
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing work before changing the memory plan");
    const bool first = memory_plan.buffers.empty();
    if (first) {
        io_region = DeviceBuffer(size_t(next.io_bytes));
    } else if (!same_io_region(memory_plan, next)) {
        throw InternalError(fmt::format("two memory plans of '{}' disagree on the I/O region, "
                                        "which must depend on the graph only; please report it",
                                        graph.name()));
    }
    bind_arena(size_t(next.shared_bytes));
    memory_plan = std::move(next);
    if (first) set_up_ports();
    // Seeded values in the shared region: convolutions are timed on real-looking data, and no
    // kernel reads memory nothing wrote.
    fill(arena->data(), memory_plan.shared_bytes / dtype_bytes(dtype), dtype,
         options.fill_seed + memory_plan.buffers.size());
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(origin.get()), "filling the engine's memory");
    views.assign(size_t(graph.size()), TensorView{});
    for (const Op& op : graph.ops())
        views[size_t(op.id)] = view_at(memory_plan.op_places[size_t(op.id)], op.output);
    if (first) {
        execs.resize(size_t(graph.size()));
        for (const Op& op : graph.ops()) {
            OpPlan& p = execs[size_t(op.id)].plan;
            p.op_id = op.id;
            p.name = op.name;
            p.kind = op.kind;
            // Its place is a slice of a concat's buffer (not a view, not a merged output).
            const int home_buffer = memory_plan.op_places[size_t(op.id)].buffer;
            const PlannedBuffer& home = memory_plan.buffers[size_t(home_buffer)];
            p.writes_into_concat = op.kind != OpKind::ChannelSlice &&
                                   home.kind == BufferKind::Activation && home.op != op.id;
            p.storage = fmt::format("{} {}", to_string(dtype), to_string(layout));
        }
    } else {
        replace_merges();
        for (const MergePlacement& m : memory_plan.merges)
            if (merges.find(m.signature) == merges.end())
                plan_merge(Stage{StageStrategy::Merge, {m.ops}});
        for (const Op& op : graph.ops()) replan_op(op);
    }
    ensure_workspaces(size_t(std::max(1, memory_plan.workspace_slots)));
    grow_workspaces();
    // `captured` stays set: what this plan kept from the last one (the arena when it fits,
    // workspaces that did not grow, convolutions not planned again) is still used by the graphs
    // captured before, so a later re-plan (refine_staging's, or the next schedule's) must retire
    // it too. Clearing it here freed a kept arena on the next re-plan, and graphs captured two
    // plans back then read freed memory (an illegal address on the H100). release_retired()
    // clears it.
}

}  // namespace iostune
