#include "src/engine/graph_edges.h"

#include <vector>

#include "src/engine/cuda_check.h"

namespace iostune {

EdgeCounts make_programmatic_edges_full(cudaGraph_t graph, const std::string& what) {
    size_t count = 0;
    IOSTUNE_CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), what);
    std::vector<cudaGraphNode_t> from(count), to(count);
    std::vector<cudaGraphEdgeData> data(count);
    IOSTUNE_CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &count), what);
    EdgeCounts counts{count, 0};
    for (size_t i = 0; i < count; ++i) {
        const bool full = data[i].type == cudaGraphDependencyTypeDefault &&
                          data[i].from_port == cudaGraphKernelNodePortDefault &&
                          data[i].to_port == 0;
        if (full) continue;
        ++counts.programmatic;
        IOSTUNE_CUDA_CHECK(cudaGraphRemoveDependencies(graph, &from[i], &to[i], &data[i], 1), what);
        IOSTUNE_CUDA_CHECK(cudaGraphAddDependencies(graph, &from[i], &to[i], nullptr, 1), what);
    }
    return counts;
}

}  // namespace iostune
