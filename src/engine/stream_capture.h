// Capturing work enqueued on a stream into an instantiated CUDA graph. The work runs once first
// (lazy module loading, cuDNN's per-call set-up and every first-run cost stay out of the graph),
// then is captured in thread-local mode, so other threads' CUDA calls are not disturbed.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "src/engine/cuda_check.h"
#include "src/engine/cuda_graph.h"

namespace iostune {

// IOSTUNE_GRAPH_EDGES=report|default: a debugging aid (the race of docs/memory.md). Counts the
// captured graph's programmatic edges (a library kernel launched to overlap the one before it on
// its stream) on stderr; "default" also turns each into a full dependency.
inline void debug_graph_edges(cudaGraph_t graph, const std::string& what) {
    static const char* mode = std::getenv("IOSTUNE_GRAPH_EDGES");
    if (mode == nullptr) return;
    size_t count = 0;
    IOSTUNE_CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), what);
    std::vector<cudaGraphNode_t> from(count), to(count);
    std::vector<cudaGraphEdgeData> data(count);
    IOSTUNE_CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &count), what);
    size_t special = 0;
    for (size_t i = 0; i < count; ++i) {
        if (data[i].type == cudaGraphDependencyTypeDefault && data[i].from_port == 0 &&
            data[i].to_port == 0)
            continue;
        ++special;
        if (std::string(mode) != "default") continue;
        IOSTUNE_CUDA_CHECK(cudaGraphRemoveDependencies(graph, &from[i], &to[i], &data[i], 1), what);
        IOSTUNE_CUDA_CHECK(cudaGraphAddDependencies(graph, &from[i], &to[i], nullptr, 1), what);
    }
    fmt::print(stderr, "IOSTUNE_GRAPH_EDGES: {}: {} of {} edges programmatic{}\n", what, special,
               count, std::string(mode) == "default" ? " (made full dependencies)" : "");
}

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
    debug_graph_edges(raw, what);
    return graph;
}

template <class Launch>
CudaGraphExec capture_graph(cudaStream_t stream, Launch&& launch, const std::string& what) {
    return CudaGraphExec(record_graph(stream, std::forward<Launch>(launch), what));
}

}  // namespace iostune
