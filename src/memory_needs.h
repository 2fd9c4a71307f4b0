// How much memory running a graph takes, worked out from its shapes before anything is
// allocated: a model too large for the machine is refused with one line saying how large,
// instead of failing in the allocator (std::bad_alloc) or being killed by the kernel.
#pragma once

#include <cstdint>
#include <string>

#include "src/graph.h"

namespace iostune {

struct MemoryNeeds {
    int64_t weights = 0;      // bytes of parameters still to be allocated
    int64_t inputs = 0;       // bytes of the graph's inputs
    int64_t activations = 0;  // bytes of outputs and intermediate tensors at their peak
    int64_t total() const { return weights + inputs + activations; }
};

// The CPU reference (src/reference/reference.h) at the graph's batch: its float32 weights when
// the graph has none yet (seeded ones are made before the run; loaded ones are already held),
// its float32 inputs, and the peak of the tensors it holds at once, op after op as it frees
// them, outputs and an op's scratch included.
MemoryNeeds reference_memory_needs(const Graph& graph);

// What the GPU engine allocates at least: every weight and every op's output stored with
// `element_bytes` per value (an op writing straight into a concatenation, or a channel slice,
// shares its buffer), and the caller's float32 input buffers. Workspaces come on top.
MemoryNeeds engine_memory_needs(const Graph& graph, int element_bytes);

// A byte count for people: "812 bytes", "3.4 MiB", "37.2 GiB", "1.6 TiB".
std::string byte_text(int64_t bytes);

}  // namespace iostune
