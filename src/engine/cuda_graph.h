// Owned CUDA graphs: CudaGraph holds a captured graph, CudaGraphExec its instantiated,
// launchable form. An exec does not need its source graph after instantiation.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "src/engine/cuda_check.h"

namespace iostune {

class CudaGraph {
public:
    CudaGraph() = default;
    explicit CudaGraph(cudaGraph_t graph) : graph_(graph) {}
    ~CudaGraph() {
        if (graph_ != nullptr) cudaGraphDestroy(graph_);
    }
    CudaGraph(const CudaGraph&) = delete;
    CudaGraph& operator=(const CudaGraph&) = delete;
    CudaGraph(CudaGraph&& other) noexcept : graph_(std::exchange(other.graph_, nullptr)) {}
    CudaGraph& operator=(CudaGraph&& other) noexcept {
        std::swap(graph_, other.graph_);
        return *this;
    }

    cudaGraph_t get() const { return graph_; }
    size_t node_count() const {
        size_t count = 0;
        IOSTUNE_CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &count), "counting CUDA graph nodes");
        return count;
    }

private:
    cudaGraph_t graph_ = nullptr;
};

class CudaGraphExec {
public:
    CudaGraphExec() = default;
    // Each kernel node runs at the priority of the stream it was captured on (a schedule's
    // priorities, Schedule::priorities), not at that of the stream the graph is launched into.
    explicit CudaGraphExec(const CudaGraph& graph) : node_count_(graph.node_count()) {
        IOSTUNE_CUDA_CHECK(
            cudaGraphInstantiate(&exec_, graph.get(), cudaGraphInstantiateFlagUseNodePriority),
            "instantiating a CUDA graph");
    }
    ~CudaGraphExec() {
        if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    }
    CudaGraphExec(const CudaGraphExec&) = delete;
    CudaGraphExec& operator=(const CudaGraphExec&) = delete;
    CudaGraphExec(CudaGraphExec&& other) noexcept
        : exec_(std::exchange(other.exec_, nullptr)), node_count_(other.node_count_) {}
    CudaGraphExec& operator=(CudaGraphExec&& other) noexcept {
        std::swap(exec_, other.exec_);
        std::swap(node_count_, other.node_count_);
        return *this;
    }

    cudaGraphExec_t get() const { return exec_; }
    bool valid() const { return exec_ != nullptr; }
    size_t node_count() const { return node_count_; }  // of the graph it was made from
    void launch(cudaStream_t stream) const {
        IOSTUNE_CUDA_CHECK(cudaGraphLaunch(exec_, stream), "launching a CUDA graph");
    }

private:
    cudaGraphExec_t exec_ = nullptr;
    size_t node_count_ = 0;
};

}  // namespace iostune
