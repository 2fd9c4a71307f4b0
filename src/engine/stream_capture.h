// Capturing work enqueued on a stream into an instantiated CUDA graph. The work runs once first
// (lazy module loading, cuDNN's per-call set-up and every first-run cost stay out of the graph),
// then is captured in thread-local mode, so other threads' CUDA calls are not disturbed.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <string>
#include <utility>

#include "src/engine/cuda_check.h"
#include "src/engine/cuda_graph.h"
#include "src/engine/graph_edges.h"

namespace iostune {

// The captured graph, not instantiated (a caller that adds nodes to it, or keeps its nodes to
// update an instantiated copy, needs the graph itself).
// warm_up false: for work that has run (and been captured) before, so nothing runs now.
template <class Launch>
CudaGraph record_graph(cudaStream_t stream, Launch&& launch, const std::string& what,
                       bool warm_up = true) {
    if (warm_up) {
        launch(stream);
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), fmt::format("warming up {}", what));
    }
    IOSTUNE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                       fmt::format("starting to capture {}", what));
    try {
        launch(stream);
    } catch (...) {
        cudaGraph_t broken = nullptr;
        cudaStreamEndCapture(stream, &broken);
        if (broken != nullptr) cudaGraphDestroy(broken);
        throw;
    }
    cudaGraph_t raw = nullptr;
    IOSTUNE_CUDA_CHECK(cudaStreamEndCapture(stream, &raw),
                       fmt::format("ending the capture of {}", what));
    CudaGraph graph(raw);
    // Launches run in the order the memory plan assumes, not overlapped by PDL (graph_edges.h).
    make_programmatic_edges_full(raw, what);
    return graph;
}

template <class Launch>
CudaGraphExec capture_graph(cudaStream_t stream, Launch&& launch, const std::string& what) {
    return CudaGraphExec(record_graph(stream, std::forward<Launch>(launch), what));
}

}  // namespace iostune
