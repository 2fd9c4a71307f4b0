// Keeping a captured graph's order transitive. cuBLASLt's sm90 kernels (and some of cuDNN's) are
// launched with programmatic dependent launch (PDL): captured, the edge from the kernel before
// one of them on its stream is programmatic, so the library kernel may start, and may finish,
// while that kernel still runs. The library kernel itself waits where it reads its inputs, but
// the nodes after it only wait for it, not for the kernel before it. Within one model's chain
// that is harmless; in a dataflow schedule a lane interleaves unrelated operators (of several
// models, or branches), and the node after the library kernel then reads the output of a kernel
// that has not finished (docs/memory.md, "The race and its fix").
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace iostune {

enum class ProgrammaticEdges {
    full,        // each programmatic edge becomes a full dependency (no PDL overlap)
    transitive,  // kept, but the kernel before also precedes every node after the PDL kernel
    captured,    // left as captured (only for measuring what the race needs)
};

struct EdgeCounts {
    size_t edges = 0;         // in the captured graph
    size_t programmatic = 0;  // of those
    size_t added = 0;         // full dependencies added to keep the order transitive
};

// IOSTUNE_GRAPH_EDGES=full|transitive|captured picks the mode (full when unset) and prints the
// counts of every captured graph on stderr; a measuring aid.
ProgrammaticEdges programmatic_edges_mode();

EdgeCounts settle_programmatic_edges(cudaGraph_t graph, ProgrammaticEdges mode,
                                     const std::string& what);

}  // namespace iostune
