// Keeping a captured graph's kernels in the order they were enqueued. Library kernels (by
// docs/memory.md's bisection, cuBLASLt's sm90 ones) are launched with programmatic dependent
// launch (PDL): captured, the edge from the kernel before one of them on its stream is
// programmatic, and once that kernel lets its dependents start (a kernel may do so early) the
// library kernel runs its first part beside it, before it waits for it. The memory plan assumes
// launches on a lane run one at a time, so a workspace slot or an arena range handed from one to
// the next may be used by both at once. In a dataflow schedule, where a lane interleaves
// unrelated operators, outputs were corrupted that way (the race of docs/memory.md). Every
// programmatic edge is therefore made a full dependency: about 3% on ResNet-50 at batch 1, noise
// on the other models measured.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace iostune {

struct EdgeCounts {
    size_t edges = 0;         // in the captured graph
    size_t programmatic = 0;  // of those, each now a full dependency
};

EdgeCounts make_programmatic_edges_full(cudaGraph_t graph, const std::string& what);

}  // namespace iostune
