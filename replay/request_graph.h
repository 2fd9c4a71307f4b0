// A request's CUDA graph: the captured schedule preceded by one memcpy node per input that
// copies the caller's data into the engine's input buffer. Before each launch the copies'
// sources and sizes are set on the instantiated graph (cudaGraphExecMemcpyNodeSetParams1D), so
// a request is one launch: no separate copy enqueued ahead of it, and less host time before
// the GPU starts (what a caller timing one request on an idle GPU sees).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <vector>

#include "src/engine/cuda_graph.h"

namespace iostune {

class RequestGraph {
public:
    // `schedule`: the captured schedule, which gets the copies; destinations[k]: input k's
    // buffer. The first request's device pointers and byte counts build the copies.
    RequestGraph(CudaGraph schedule, std::vector<void*> destinations,
                 std::span<const void* const> sources, std::span<const std::size_t> bytes);

    // Copies bytes[k] (> 0) from sources[k] (device memory of this GPU) into input k, then runs
    // the schedule, as one launch on `stream`. Launches already enqueued keep their sources.
    void launch(std::span<const void* const> sources, std::span<const std::size_t> bytes,
                cudaStream_t stream);

private:
    CudaGraph graph_;  // kept: its memcpy nodes name what launch() updates
    std::vector<cudaGraphNode_t> copies_;
    std::vector<void*> destinations_;
    std::vector<const void*> sources_;  // what each node copies now
    std::vector<std::size_t> bytes_;
    CudaGraphExec exec_;
};

}  // namespace iostune
