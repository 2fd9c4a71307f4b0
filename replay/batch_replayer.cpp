#include "iostune/batch_replayer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "src/engine/cuda_check.h"
#include "src/engine/cuda_event.h"
#include "src/engine/device_buffer.h"
#include "src/engine/timing.h"
#include "replay/replay_target.h"
#include "replay/replay_timing.h"
#include "src/error.h"

namespace iostune {

namespace {

// One tuned size: its Replayer and which of its input items are known to be zero padding.
struct TunedGraph {
    int batch = 0;
    Replayer replayer;
    // Items [clean_from[k], batch) of input k hold zeros; the items before may hold a request's
    // data. Unknown at first (the engine's buffers are not cleared), so nothing is clean.
    std::vector<int> clean_from;
};

int element_bytes(const ReplayInfo& info) {
    return !info.native_io || info.storage == "float" ? 4 : 2;
}

// Bytes of one item of a buffer of `elements` elements holding `batch` items.
std::size_t item_bytes(std::size_t elements, const ReplayInfo& info) {
    return elements / std::size_t(info.batch) * std::size_t(element_bytes(info));
}

const std::byte* at_item(const void* base, int item, std::size_t bytes) {
    return static_cast<const std::byte*>(base) + std::size_t(item) * bytes;
}
std::byte* at_item(void* base, int item, std::size_t bytes) {
    return static_cast<std::byte*>(base) + std::size_t(item) * bytes;
}

}  // namespace

struct BatchReplayer::Impl {
    std::vector<int> sizes;
    std::vector<TunedGraph> graphs;  // in size order
    std::vector<std::size_t> input_bytes, output_bytes;  // per item

    Impl(std::vector<int> tuned, std::vector<Replayer> replayers) : sizes(std::move(tuned)) {
        for (size_t i = 0; i < sizes.size(); ++i) {
            graphs.push_back({sizes[i], std::move(replayers[i]), {}});
            graphs.back().clean_from.assign(size_t(graphs.back().replayer.input_count()), sizes[i]);
        }
        describe_items();
    }

    // Per-item sizes, which every tuned graph must share for a request to move between them.
    void describe_items() {
        const Replayer& first = graphs.front().replayer;
        for (int k = 0; k < first.input_count(); ++k)
            input_bytes.push_back(item_bytes(first.input_elements(k), first.info()));
        for (int k = 0; k < first.output_count(); ++k)
            output_bytes.push_back(item_bytes(first.output_elements(k), first.info()));
        for (const TunedGraph& g : graphs) {
            const ReplayInfo& info = g.replayer.info();
            const ReplayInfo& base = first.info();
            bool same = g.replayer.input_count() == first.input_count() &&
                        g.replayer.output_count() == first.output_count() &&
                        info.layout == base.layout && info.storage == base.storage;
            for (int k = 0; same && k < g.replayer.input_count(); ++k)
                same = item_bytes(g.replayer.input_elements(k), info) == input_bytes[size_t(k)];
            for (int k = 0; same && k < g.replayer.output_count(); ++k)
                same = item_bytes(g.replayer.output_elements(k), info) == output_bytes[size_t(k)];
            if (!same)
                throw Error(fmt::format(
                    "the schedules of '{}' for batch {} and batch {} do not take the same items "
                    "({} {} vs {} {}): with native I/O every tuned size must run in one layout. "
                    "Search them with one --layout, or use float I/O",
                    base.model, base.batch, info.batch, base.storage, base.layout, info.storage,
                    info.layout));
        }
    }

    TunedGraph& graph(int batch) {
        for (TunedGraph& g : graphs)
            if (g.batch == batch) return g;
        throw Error(fmt::format("batch {} is not one of the tuned sizes [{}]", batch,
                                fmt::join(sizes, ", ")),
                    ErrorKind::BadInput);
    }

    void* input_buffer(TunedGraph& g, int k) {
        return g.replayer.info().native_io ? g.replayer.native_input_buffer(k)
                                           : static_cast<void*>(g.replayer.input_buffer(k));
    }
    const void* output_buffer(TunedGraph& g, int k) {
        return g.replayer.info().native_io ? g.replayer.native_output_buffer(k)
                                           : static_cast<const void*>(g.replayer.output_buffer(k));
    }

    // Zero-fills padding that may hold an earlier request's data, then launches the graph with
    // the chunk's items copied in by the graph itself (Replayer::launch_from).
    TunedGraph& submit_chunk(const BatchChunk& c, const void* const* inputs, cudaStream_t stream) {
        TunedGraph& g = graph(c.tuned);
        sources.clear();
        bytes.clear();
        for (size_t k = 0; k < input_bytes.size(); ++k) {
            sources.push_back(at_item(inputs[k], c.offset, input_bytes[k]));
            bytes.push_back(size_t(c.count) * input_bytes[k]);
            int& clean = g.clean_from[k];
            if (c.count < clean)
                IOSTUNE_CUDA_CHECK(cudaMemsetAsync(at_item(input_buffer(g, int(k)), c.count,
                                                           input_bytes[k]),
                                                   0, size_t(clean - c.count) * input_bytes[k],
                                                   stream),
                                   fmt::format("zero-filling the padding of the batch-{} graph",
                                               c.tuned));
            clean = c.count;
        }
        g.replayer.launch_from(sources.data(), bytes.data(), stream);
        return g;
    }

    void collect_chunk(TunedGraph& g, const BatchChunk& c, void* const* outputs,
                       cudaStream_t stream) {
        for (size_t k = 0; k < output_bytes.size(); ++k)
            IOSTUNE_CUDA_CHECK(
                cudaMemcpyAsync(at_item(outputs[k], c.offset, output_bytes[k]),
                                output_buffer(g, int(k)), size_t(c.count) * output_bytes[k],
                                cudaMemcpyDeviceToDevice, stream),
                fmt::format("copying {} items of output {} out of the batch-{} graph", c.count, k,
                            c.tuned));
    }

    std::vector<const void*> sources;  // per input, for the chunk being submitted
    std::vector<size_t> bytes;
    std::optional<BatchChunk> pending;  // submitted, not yet collected
};

BatchReplayer::BatchReplayer(const std::string& model, const std::vector<int>& batch_sizes,
                             const ReplayOptions& options) {
    std::vector<int> sizes = tuned_batch_sizes(batch_sizes);
    if (options.schedule_id != 0 && sizes.size() > 1)
        throw Error(fmt::format("a schedule id (#{}) is one stored schedule of one batch size; "
                                "it cannot serve the batch sizes [{}]: drop it, or give one "
                                "batch size",
                                options.schedule_id, fmt::join(sizes, ", ")),
                    ErrorKind::BadInput);
    if (options.placements != 1)
        throw Error(fmt::format("{} arena placements: they are a single-size Replayer's benchmark "
                                "option, and a BatchReplayer's sizes share one arena: give 1",
                                options.placements),
                    ErrorKind::BadInput);
    // Every size's schedule is looked up and checked before any engine takes GPU memory, so
    // that their engines can share one arena and one copy of the weights.
    std::vector<ReplayTarget> targets;
    for (int b : sizes) {
        ReplayOptions one = options;
        one.batch = b;
        targets.push_back(resolve_replay({model}, one));
    }
    impl_ = std::make_unique<Impl>(std::move(sizes), Replayer::sharing_memory(std::move(targets)));
}
BatchReplayer::~BatchReplayer() = default;
BatchReplayer::BatchReplayer(BatchReplayer&&) noexcept = default;
BatchReplayer& BatchReplayer::operator=(BatchReplayer&&) noexcept = default;

const std::vector<int>& BatchReplayer::batch_sizes() const { return impl_->sizes; }
const Replayer& BatchReplayer::replayer(int batch) const { return impl_->graph(batch).replayer; }
Replayer& BatchReplayer::replayer(int batch) {
    TunedGraph& g = impl_->graph(batch);
    // A check on it runs on its engine's own stream, which the caller cannot order after the
    // requests on theirs, and the sizes share one arena: what runs must finish first.
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing the requests before a direct run");
    std::fill(g.clean_from.begin(), g.clean_from.end(), g.batch);
    if (impl_->pending && impl_->pending->tuned == batch) impl_->pending.reset();
    return g.replayer;
}
BatchMemory BatchReplayer::memory() const {
    BatchMemory m;
    size_t arena = 0;
    for (const TunedGraph& g : impl_->graphs) {
        const ReplayInfo& info = g.replayer.info();
        m.weight_bytes += info.weight_bytes - info.shared_weight_bytes;
        m.activation_bytes += info.activation_bytes - info.shared_arena_bytes;
        m.workspace_bytes += info.workspace_bytes;
        m.device_memory_bytes +=
            info.device_memory_bytes - info.shared_weight_bytes - info.shared_arena_bytes;
        arena = std::max(arena, info.shared_arena_bytes);
    }
    m.shared_arena_bytes = arena;
    m.activation_bytes += arena;
    m.device_memory_bytes += arena;
    return m;
}

int BatchReplayer::input_count() const { return int(impl_->input_bytes.size()); }
int BatchReplayer::output_count() const { return int(impl_->output_bytes.size()); }

std::size_t BatchReplayer::input_item_bytes(int index) const {
    if (index < 0 || index >= input_count())
        throw Error(fmt::format("the model has {} input(s); there is no input {}", input_count(),
                                index),
                    ErrorKind::BadInput);
    return impl_->input_bytes[size_t(index)];
}
std::size_t BatchReplayer::output_item_bytes(int index) const {
    if (index < 0 || index >= output_count())
        throw Error(fmt::format("the model has {} output(s); there is no output {}",
                                output_count(), index),
                    ErrorKind::BadInput);
    return impl_->output_bytes[size_t(index)];
}

std::vector<BatchChunk> BatchReplayer::plan(int n) const {
    return plan_batch_request(impl_->sizes, n);
}

void BatchReplayer::run(const void* const* inputs, void* const* outputs, int n,
                        cudaStream_t stream) {
    impl_->pending.reset();  // its graph's buffers are about to be overwritten
    for (const BatchChunk& chunk : plan(n))
        impl_->collect_chunk(impl_->submit_chunk(chunk, inputs, stream), chunk, outputs, stream);
}

void BatchReplayer::submit(const void* const* inputs, int n, cudaStream_t stream) {
    const std::vector<BatchChunk> chunks = plan(n);
    if (chunks.size() != 1)
        throw Error(fmt::format("a request of {} items runs in {} chunks (the largest tuned size is "
                                "{}); submit() takes one graph's worth: use run(), which splits",
                                n, chunks.size(), impl_->sizes.back()),
                    ErrorKind::BadInput);
    impl_->pending.reset();
    impl_->submit_chunk(chunks.front(), inputs, stream);
    impl_->pending = chunks.front();
}

void BatchReplayer::collect(void* const* outputs, cudaStream_t stream) {
    if (!impl_->pending)
        throw Error("collect() without a submitted request: submit() one first (a run() or a "
                    "second submit() drops the one before)",
                    ErrorKind::BadInput);
    const BatchChunk chunk = *impl_->pending;
    impl_->pending.reset();
    impl_->collect_chunk(impl_->graph(chunk.tuned), chunk, outputs, stream);
}

void BatchReplayer::run(const void* input, void* output, int n, cudaStream_t stream) {
    if (input_count() != 1 || output_count() != 1)
        throw Error(fmt::format("this model takes {} input(s) and returns {} output(s); pass one "
                                "pointer for each",
                                input_count(), output_count()),
                    ErrorKind::BadInput);
    const void* inputs[] = {input};
    void* outputs[] = {output};
    run(inputs, outputs, n, stream);
}

ReplayTiming BatchReplayer::benchmark_graph(int batch, int iterations, cudaStream_t stream,
                                            int warmup) {
    return impl_->graph(batch).replayer.benchmark(iterations, stream, warmup);
}

ReplayTiming BatchReplayer::benchmark(int n, int iterations, cudaStream_t stream, int warmup) {
    if (iterations <= 0)
        throw Error(fmt::format("benchmark iterations must be positive, got {}", iterations),
                    ErrorKind::BadInput);
    plan(n);  // checks n before anything is allocated
    std::vector<DeviceBuffer> in, out;
    std::vector<const void*> in_ptrs;
    std::vector<void*> out_ptrs;
    for (std::size_t bytes : impl_->input_bytes) in_ptrs.push_back(in.emplace_back(bytes * n).get());
    for (std::size_t bytes : impl_->output_bytes) out_ptrs.push_back(out.emplace_back(bytes * n).get());
    for (DeviceBuffer& b : in)
        IOSTUNE_CUDA_CHECK(cudaMemsetAsync(b.get(), 0, b.bytes(), stream), "clearing the input");

    // Warm-up as Replayer::benchmark: enough launches, and at least 300 ms of steady work so the
    // GPU's clocks settle.
    using Clock = std::chrono::steady_clock;
    const auto warm_start = Clock::now();
    for (int i = 0; i < warmup || Clock::now() - warm_start < std::chrono::milliseconds(300); ++i) {
        run(in_ptrs.data(), out_ptrs.data(), n, stream);
        if (i % 16 == 15)
            IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "warming up the requests");
    }
    const CudaEvent start(CudaEvent::Timing::Enabled), stop(CudaEvent::Timing::Enabled);
    std::vector<double> gpu_ms, enqueue_ms;
    for (int i = 0; i < iterations; ++i) {
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "waiting for the previous request");
        const auto host_start = Clock::now();
        start.record(stream);
        run(in_ptrs.data(), out_ptrs.data(), n, stream);
        stop.record(stream);
        enqueue_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - host_start).count());
        IOSTUNE_CUDA_CHECK(cudaEventSynchronize(stop.get()), "timing a request");
        float ms = 0;
        IOSTUNE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()), "timing a request");
        gpu_ms.push_back(double(ms));
    }
    return to_replay_timing(summarize(std::move(gpu_ms), std::move(enqueue_ms), 1), iterations, n);
}

}  // namespace iostune
