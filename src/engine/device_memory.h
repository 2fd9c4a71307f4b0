// The memory check before the engine allocates anything: a model whose weights and activations
// alone do not fit the GPU's free memory is refused in one line ("needs 37.2 GiB of device
// memory ...; this GPU has 79.1 GiB free") instead of failing in cudaMalloc halfway through
// the plan.
#pragma once

#include "src/graph.h"
#include "src/precision.h"

namespace iostune {

// Throws iostune::Error when the graph's weights and activations (engine_memory_needs(), at the
// precision's storage size) exceed what cudaMemGetInfo reports free on the current device, or
// when its weights still to be seeded exceed the host's memory (host_memory.h). Workspaces come
// on top, so passing is no promise; failing is certain.
void require_engine_memory(const Graph& graph, Precision precision, int element_bytes);

}  // namespace iostune
