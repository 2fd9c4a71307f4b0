// Bringing the GPU's clock up before kernels are timed against each other. An idle GPU drops to
// a fraction of its clock (the H100 used here idles at a few hundred MHz) and needs a stretch of
// steady work to climb back. Convolution variants timed while it climbs rank differently: on the
// H100 one process timed ResNet-50's convolutions about 2x slower than another and its choices ran
// the network 40% slower (1.15 vs 0.82 ms at batch 1).
#pragma once

#include <cuda_runtime.h>

namespace iostune {

// Runs a compute-bound probe kernel on `stream`, timing each run, until the runs of the last
// 10 ms of GPU time are all within 2% of the fastest (the clock has stopped rising), or `max_ms`
// of host time has passed. Costs about 10 ms on a GPU that is already up to speed. Returns the
// number of probe runs.
int warm_up_clock(cudaStream_t stream, double max_ms = 500.0);

}  // namespace iostune
