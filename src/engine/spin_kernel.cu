// A kernel that does nothing for a given time (launch_spin, kernels.h): the delay a perturbed
// replay puts before chosen launches (perturbation.h). It reads the GPU's global nanosecond
// timer, so the delay does not depend on the clock speed.
#include "src/engine/kernel_support.cuh"
#include "src/engine/kernels.h"

namespace iostune {

namespace {

__device__ __forceinline__ uint64_t global_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_kernel(uint64_t nanoseconds) {
    const uint64_t start = global_ns();
    while (global_ns() - start < nanoseconds) {
    }
}

}  // namespace

void launch_spin(uint64_t nanoseconds, cudaStream_t stream) {
    spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
    kernel_support::check_launch("spin");
}

}  // namespace iostune
