// Replay at any batch size: one Replayer (one captured CUDA Graph, iostune/replay.h) per tuned
// batch size of a model, and requests of any size n planned on them (iostune/batch_plan.h):
// the smallest tuned size >= n runs it with the input padded and the output trimmed; a request
// above the largest tuned size runs in chunks.
//
//   iostune::ReplayOptions options;              // db_path, precision, native_io, ...
//   iostune::BatchReplayer model("inception_v3", {1, 4, 16}, options);
//   model.run(d_input, d_output, 3, stream);     // 3 items: the batch-4 graph, 1 item padded
//
// Every CNN operator iostune runs is per sample (convolution, pooling, batch norm folded into
// the convolution), so padded items change no other item's output; they are zero-filled (once,
// not on every request) so that no stale request's data runs through the graph.
//
// Each tuned size has its own engine and graph, but they never run at the same time, so they
// share one arena (sized for the largest size's memory plan: what is dead between launches)
// and one copy of the weights (per layout, when the sizes' schedules run in different ones);
// each keeps its own inputs, outputs and workspaces. Like a Replayer, a BatchReplayer owns its
// buffers: runs on different streams must be ordered by the caller.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "iostune/batch_plan.h"
#include "iostune/replay.h"

namespace iostune {

// Device memory a BatchReplayer holds, in bytes, what its sizes share counted once.
struct BatchMemory {
    std::size_t weight_bytes = 0;      // one copy per layout, and each size's merged weights
    std::size_t activation_bytes = 0;  // the shared arena, and each size's inputs and outputs
    std::size_t shared_arena_bytes = 0;  // the arena alone (0 when the sizes do not share one)
    std::size_t workspace_bytes = 0;   // each size's cuDNN/cuBLAS workspaces
    std::size_t device_memory_bytes = 0;  // all of it
};

class BatchReplayer {
public:
    // `batch_sizes`: the tuned sizes, in any order (options.batch is not used). Each opens the
    // best stored schedule for (model, this GPU, size, options.precision), as a Replayer does,
    // and the errors are a Replayer's (a missing schedule names the batch size it is for).
    // options.schedule_id picks one stored schedule, so it needs exactly one batch size.
    BatchReplayer(const std::string& model, const std::vector<int>& batch_sizes,
                  const ReplayOptions& options = {});
    ~BatchReplayer();
    BatchReplayer(BatchReplayer&&) noexcept;
    BatchReplayer& operator=(BatchReplayer&&) noexcept;
    BatchReplayer(const BatchReplayer&) = delete;
    BatchReplayer& operator=(const BatchReplayer&) = delete;

    const std::vector<int>& batch_sizes() const;  // sorted, without duplicates
    // The Replayer of one tuned size (info, convolution choices); throws for another size.
    const Replayer& replayer(int batch) const;
    // The same, to run or check directly (replay_validation.h); its input buffer then counts as
    // holding data again, so the next padded request zero-fills its padding afresh. Waits for
    // the GPU first (the sizes share one arena, and a check runs on the engine's own stream).
    Replayer& replayer(int batch);
    BatchMemory memory() const;
    int input_count() const;
    int output_count() const;
    // Bytes of one batch item of an input or output: float NCHW (4 bytes an element), or with
    // ReplayOptions::native_io the engine's storage in its layout (ReplayInfo::storage, layout).
    std::size_t input_item_bytes(int index = 0) const;
    std::size_t output_item_bytes(int index = 0) const;

    // Which graph runs which items of a request of `n` items.
    std::vector<BatchChunk> plan(int n) const;
    // A request of `n` items: inputs[k] holds n items of input k and outputs[k] receives n items
    // of output k (input_count() and output_count() device pointers). Enqueued on `stream`;
    // returns without waiting. No allocation.
    void run(const void* const* inputs, void* const* outputs, int n, cudaStream_t stream);
    // One input and one output.
    void run(const void* input, void* output, int n, cudaStream_t stream);
    // run() in two halves, for a caller that allocates the outputs while the GPU runs:
    // submit() enqueues a request of n <= the largest tuned size (its inputs copied in, the
    // graph launched); collect() enqueues the copies of its outputs, on the stream given (the
    // request's, or one ordered after it). A run() or a second submit() drops a request not
    // yet collected; collect() without one throws.
    void submit(const void* const* inputs, int n, cudaStream_t stream);
    void collect(void* const* outputs, cudaStream_t stream);

    // `iterations` requests of `n` items (copies in and out included) on `stream`, each timed
    // alone between CUDA events after `warmup` untimed ones (and at least 300 ms of warm-up,
    // as Replayer::benchmark), on buffers of its own.
    ReplayTiming benchmark(int n, int iterations, cudaStream_t stream, int warmup = 20);
    // The graph of tuned size `batch` alone, as Replayer::benchmark (what `iostune replay`
    // times): no copies in or out.
    ReplayTiming benchmark_graph(int batch, int iterations, cudaStream_t stream, int warmup = 20);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace iostune
