// Seeded uniform values in [-1, 1) for device memory nothing has written yet (launch_fill_uniform,
// kernels.h): a stateless hash of (seed, index), so the values do not depend on the launch shape.
#include "src/engine/kernel_support.cuh"
#include "src/engine/kernels.h"

namespace iostune {

using namespace kernel_support;

namespace {

// SplitMix64's finaliser: consecutive indexes give unrelated 64-bit values.
__device__ __forceinline__ uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

template <class T>
__global__ void fill_uniform_kernel(T* data, int64_t total, uint64_t seed) {
    IOSTUNE_GRID_LOOP(i, total) {
        // The top 24 bits as a fraction in [0, 1), exact in float.
        const float unit = float(mix(seed ^ mix(uint64_t(i))) >> 40) * (1.0f / 16777216.0f);
        store(data + i, 2.0f * unit - 1.0f);
    }
}

}  // namespace

void launch_fill_uniform(void* data, int64_t elements, DType dtype, uint64_t seed,
                         cudaStream_t stream) {
    if (elements <= 0) return;
    dispatch(dtype, [&](auto t) {
        using T = decltype(t);
        fill_uniform_kernel<T><<<blocks_for(elements), kThreads, 0, stream>>>(
            static_cast<T*>(data), elements, seed);
    });
    check_launch("fill");
}

}  // namespace iostune
