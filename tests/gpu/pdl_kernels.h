// Kernels for test_graph_edges.cpp: the shape of the race programmatic dependent launch (PDL)
// allows in a captured graph (src/engine/graph_edges.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace iostune::test {

// Lets the next kernel on the stream start at once (it triggers its dependents first), then
// spins for `nanoseconds` and sets *flag to 1.
void launch_early_trigger_then_write(int* flag, uint64_t nanoseconds, cudaStream_t stream);
// Does nothing, launched as a PDL secondary (it may start before the kernel before it ends),
// without waiting for that kernel: what a library kernel with no input from it may do.
void launch_programmatic_noop(cudaStream_t stream);
// *to = *from.
void launch_copy_flag(const int* from, int* to, cudaStream_t stream);

}  // namespace iostune::test
