#include "replay/request_graph.h"

#include <fmt/format.h>

#include <utility>

#include "src/engine/cuda_check.h"
#include "src/error.h"

namespace iostune {

namespace {

void require_sizes(std::size_t inputs, std::span<const void* const> sources,
                   std::span<const std::size_t> bytes) {
    if (sources.size() != inputs || bytes.size() != inputs)
        throw Error(fmt::format("a request graph copies {} input(s); got {} source(s) and {} size(s)",
                                inputs, sources.size(), bytes.size()),
                    ErrorKind::General);
    for (std::size_t k = 0; k < inputs; ++k)
        if (bytes[k] == 0)  // a memcpy node cannot copy nothing
            throw Error(fmt::format("a request copies 0 bytes of input {}", k), ErrorKind::General);
}

}  // namespace

RequestGraph::RequestGraph(CudaGraph schedule, std::vector<void*> destinations,
                           std::span<const void* const> sources, std::span<const std::size_t> bytes)
    : graph_(std::move(schedule)),
      destinations_(std::move(destinations)),
      sources_(sources.begin(), sources.end()),
      bytes_(bytes.begin(), bytes.end()) {
    require_sizes(destinations_.size(), sources, bytes);
    std::size_t root_count = 0;
    IOSTUNE_CUDA_CHECK(cudaGraphGetRootNodes(graph_.get(), nullptr, &root_count),
                       "counting the schedule's first nodes");
    std::vector<cudaGraphNode_t> roots(root_count);
    IOSTUNE_CUDA_CHECK(cudaGraphGetRootNodes(graph_.get(), roots.data(), &root_count),
                       "listing the schedule's first nodes");
    for (std::size_t k = 0; k < destinations_.size(); ++k) {
        cudaGraphNode_t copy = nullptr;
        IOSTUNE_CUDA_CHECK(cudaGraphAddMemcpyNode1D(&copy, graph_.get(), nullptr, 0,
                                                    destinations_[k], sources_[k], bytes_[k],
                                                    cudaMemcpyDeviceToDevice),
                           fmt::format("adding the copy of input {} to the request graph", k));
        // Every first node of the schedule waits for every copy: simple, and the copies of a
        // few megabytes are done long before any useful overlap could start.
        for (cudaGraphNode_t root : roots)
            IOSTUNE_CUDA_CHECK(cudaGraphAddDependencies(graph_.get(), &copy, &root, nullptr, 1),
                               "ordering the schedule after the input copy");
        copies_.push_back(copy);
    }
    exec_ = CudaGraphExec(graph_);
}

void RequestGraph::launch(std::span<const void* const> sources, std::span<const std::size_t> bytes,
                          cudaStream_t stream) {
    require_sizes(copies_.size(), sources, bytes);
    for (std::size_t k = 0; k < copies_.size(); ++k) {
        if (sources[k] == sources_[k] && bytes[k] == bytes_[k]) continue;
        IOSTUNE_CUDA_CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec_.get(), copies_[k],
                                                              destinations_[k], sources[k],
                                                              bytes[k], cudaMemcpyDeviceToDevice),
                           fmt::format("pointing the request graph's copy of input {} at the "
                                       "caller's data (device memory of this GPU?)",
                                       k));
        sources_[k] = sources[k];
        bytes_[k] = bytes[k];
    }
    exec_.launch(stream);
}

}  // namespace iostune
