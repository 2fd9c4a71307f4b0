// Kernels for test_graph_edges.cpp: the shape of the race programmatic dependent launch (PDL)
// allows in a captured graph (src/engine/graph_edges.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace iostune::test {

// Lets the next kernel on the stream start at once (it triggers its dependents first, as
// cuDNN's kernels do), spins for `nanoseconds`, then copies *from to *to.
void launch_early_trigger_then_copy(const int* from, int* to, uint64_t nanoseconds,
                                    cudaStream_t stream);
// Launched as a PDL secondary: sets *target to `value` before it waits for the kernel before
// it, as a library kernel may set up its workspace.
void launch_programmatic_write(int* target, int value, cudaStream_t stream);

}  // namespace iostune::test
