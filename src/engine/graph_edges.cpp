#include "src/engine/graph_edges.h"

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "src/engine/cuda_check.h"
#include "src/error.h"

namespace iostune {
namespace {

bool is_programmatic(const cudaGraphEdgeData& edge) {
    return !(edge.type == cudaGraphDependencyTypeDefault && edge.from_port == 0 && edge.to_port == 0);
}

struct Edge {
    cudaGraphNode_t from;
    cudaGraphNode_t to;
    cudaGraphEdgeData data;
};

std::vector<Edge> graph_edges(cudaGraph_t graph, const std::string& what) {
    size_t count = 0;
    IOSTUNE_CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), what);
    std::vector<cudaGraphNode_t> from(count), to(count);
    std::vector<cudaGraphEdgeData> data(count);
    IOSTUNE_CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &count), what);
    std::vector<Edge> edges;
    for (size_t i = 0; i < count; ++i) edges.push_back({from[i], to[i], data[i]});
    return edges;
}

void add_full_edge(cudaGraph_t graph, cudaGraphNode_t from, cudaGraphNode_t to,
                   const std::string& what) {
    IOSTUNE_CUDA_CHECK(cudaGraphAddDependencies(graph, &from, &to, nullptr, 1), what);
}

// The kernel's name, for IOSTUNE_GRAPH_EDGES's report ("?" where the runtime cannot name it:
// a kernel launched through the driver API).
std::string kernel_name(cudaGraphNode_t node) {
    cudaGraphNodeType type{};
    cudaKernelNodeParams params{};
    const char* name = nullptr;
    if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeKernel ||
        cudaGraphKernelNodeGetParams(node, &params) != cudaSuccess ||
        cudaFuncGetName(&name, params.func) != cudaSuccess || name == nullptr) {
        (void)cudaGetLastError();
        return "?";
    }
    return std::string(name).substr(0, 90);
}

void report_edges(const std::vector<Edge>& edges) {
    for (const Edge& edge : edges)
        if (is_programmatic(edge.data))
            fmt::print(stderr, "IOSTUNE_GRAPH_EDGES:   type {} port {}->{}: {} -> {}\n",
                       int(edge.data.type), int(edge.data.from_port), int(edge.data.to_port),
                       kernel_name(edge.from), kernel_name(edge.to));
}

}  // namespace

ProgrammaticEdges programmatic_edges_mode() {
    static const ProgrammaticEdges mode = [] {
        const char* value = std::getenv("IOSTUNE_GRAPH_EDGES");
        const std::string text = value == nullptr ? "full" : value;
        if (text == "full") return ProgrammaticEdges::full;
        if (text == "transitive") return ProgrammaticEdges::transitive;
        if (text == "captured") return ProgrammaticEdges::captured;
        throw Error(fmt::format("IOSTUNE_GRAPH_EDGES is '{}'; use full, transitive or captured",
                                text));
    }();
    return mode;
}

EdgeCounts settle_programmatic_edges(cudaGraph_t graph, ProgrammaticEdges mode,
                                     const std::string& what) {
    const std::vector<Edge> edges = graph_edges(graph, what);
    EdgeCounts counts;
    counts.edges = edges.size();
    std::map<cudaGraphNode_t, std::vector<const Edge*>> out_edges;
    std::set<std::pair<cudaGraphNode_t, cudaGraphNode_t>> linked;
    for (const Edge& edge : edges) {
        out_edges[edge.from].push_back(&edge);
        linked.insert({edge.from, edge.to});
        if (is_programmatic(edge.data)) ++counts.programmatic;
    }
    for (const Edge& edge : edges) {
        if (!is_programmatic(edge.data) || mode == ProgrammaticEdges::captured) continue;
        if (mode == ProgrammaticEdges::full) {
            IOSTUNE_CUDA_CHECK(
                cudaGraphRemoveDependencies(graph, &edge.from, &edge.to, &edge.data, 1), what);
            add_full_edge(graph, edge.from, edge.to, what);
            continue;
        }
        // transitive: edge.from must precede every node after edge.to, and, through a chain of
        // programmatic edges, every node after those.
        std::vector<cudaGraphNode_t> pending{edge.to};
        std::set<cudaGraphNode_t> seen{edge.to};
        while (!pending.empty()) {
            const cudaGraphNode_t node = pending.back();
            pending.pop_back();
            for (const Edge* next : out_edges[node]) {
                if (is_programmatic(next->data) && seen.insert(next->to).second)
                    pending.push_back(next->to);
                if (linked.insert({edge.from, next->to}).second) {
                    add_full_edge(graph, edge.from, next->to, what);
                    ++counts.added;
                }
            }
        }
    }
    if (std::getenv("IOSTUNE_GRAPH_EDGES") != nullptr) {
        fmt::print(stderr, "IOSTUNE_GRAPH_EDGES: {}: {} of {} edges programmatic, {} added\n",
                   what, counts.programmatic, counts.edges, counts.added);
        static bool named = false;  // the first graph's edges, by kernel
        if (counts.programmatic > 0 && !std::exchange(named, true)) report_edges(edges);
    }
    return counts;
}

}  // namespace iostune
