// The engine's fully connected layer for a few rows (launch_linear_rows, kernels.h).
//
// At batch 1 a classifier's last layer is a matrix-vector product whose weights take well under
// a microsecond to read, yet cuBLAS ran it as a split-K product, its reduction and then the bias
// kernel: three launches on the critical path of every classifier, 8.9 us for NASNet-A's
// 4032 -> 1000 in fp16 and 11.3 us (gemv + bias) in fp32 on the H200 (session-2026-11-30e's
// profiles). Here one launch does it: each output feature's weights are read once, in vector
// packs, against every row's inputs by up to 8 warps of a block (each its share of the inputs),
// the lanes' partial sums meet by shuffles and the warps' in shared memory, and the bias is added
// as the sum is stored. Measured against cuBLAS up to batch 8 (docs/search-log.md, "A
// classifier's head in fewer launches").
#include <cuda_runtime.h>

#include "src/engine/kernel_support.cuh"
#include "src/engine/kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

constexpr int kWarp = 32;

// R: rows rounded up to a power of two (the accumulators unroll); `rows` <= R are computed.
// A block's warps take kWarpsPerBlock / S features, S warps a feature, each warp its share of
// the inputs; the S partial sums meet in shared memory.
constexpr int kWarpsPerBlock = kThreads / kWarp;

template <class T, int W, int R, int S>
__global__ void __launch_bounds__(kThreads)
    linear_rows_kernel(const T* __restrict__ x, int64_t ldx, const T* __restrict__ weight,
                       const T* __restrict__ bias, T* __restrict__ y, int64_t ldy, int rows,
                       int k, int features) {
    using P = Pack<T, W>;
    __shared__ float partial[kWarpsPerBlock][R];
    const int warp = int(threadIdx.x) / kWarp, lane = int(threadIdx.x) % kWarp;
    const int feature = int(blockIdx.x) * (kWarpsPerBlock / S) + warp / S;
    const int share = warp % S;
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = 0.0f;
    if (feature < features) {
        const T* w_row = weight + int64_t(feature) * k;
#pragma unroll 4
        for (int i = (share * kWarp + lane) * W; i < k; i += S * kWarp * W) {
            const P w = *reinterpret_cast<const P*>(w_row + i);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if (r >= rows) break;
                const P v = *reinterpret_cast<const P*>(x + r * ldx + i);
#pragma unroll
                for (int j = 0; j < W; ++j) acc[r] += load(&w.e[j]) * load(&v.e[j]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        for (int offset = kWarp / 2; offset > 0; offset /= 2)
            acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], offset);
        if (lane == 0) partial[warp][r] = acc[r];
    }
    __syncthreads();
    if (lane != 0 || share != 0 || feature >= features) return;
    const float b = bias != nullptr ? load(bias + feature) : 0.0f;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        if (r >= rows) break;
        float sum = b;
        for (int s = 0; s < S; ++s) sum += partial[warp + s][r];
        store(y + r * ldy + feature, sum);
    }
}

// The widest pack (16 bytes at most) that every row start and the row length allow.
template <class T>
int linear_width(const void* x, int64_t ldx, const void* weight, int k) {
    for (int w = 16 / int(sizeof(T)); w > 1; w /= 2) {
        const size_t bytes = size_t(w) * sizeof(T);
        if (k % w == 0 && ldx % w == 0 && reinterpret_cast<uintptr_t>(x) % bytes == 0 &&
            reinterpret_cast<uintptr_t>(weight) % bytes == 0)
            return w;
    }
    return 1;
}

template <class F>
void with_rows(int rows, F&& f) {
    if (rows <= 1) f(std::integral_constant<int, 1>{});
    else if (rows <= 2) f(std::integral_constant<int, 2>{});
    else if (rows <= 4) f(std::integral_constant<int, 4>{});
    else f(std::integral_constant<int, kLinearRowsMax>{});
}

template <class F>
void with_split(int split, F&& f) {
    switch (split) {
        case 1: f(std::integral_constant<int, 1>{}); return;
        case 2: f(std::integral_constant<int, 2>{}); return;
        case 4: f(std::integral_constant<int, 4>{}); return;
        default: f(std::integral_constant<int, kWarpsPerBlock>{}); return;
    }
}

}  // namespace

void launch_linear_rows(const void* x, int64_t ldx, const void* weight, const void* bias, void* y,
                        int64_t ldy, int rows, int k, int features, DType dtype,
                        cudaStream_t stream) {
    if (rows < 1 || rows > kLinearRowsMax || k < 1 || features < 1)
        throw Error(fmt::format("linear rows kernel: {} rows of {} inputs to {} features; it "
                                "takes 1 to {} rows",
                                rows, k, features, kLinearRowsMax));
    // Warps a feature: the fewest that, with one warp per feature, give the GPU half the
    // threads it holds resident (a feature's loads are then a short chain per lane; NASNet-A's
    // 4032 inputs in fp16 took 8.0 us on one warp a feature, 16 packs a lane).
    int split = 1;
    while (split < kWarpsPerBlock && int64_t(features) * kWarp * split * 2 <= resident_threads())
        split *= 2;
    const int per_block = kWarpsPerBlock / split;
    const unsigned blocks = unsigned((features + per_block - 1) / per_block);
    dispatch(dtype, [&](auto t) {
        using T = decltype(t);
        with_width(linear_width<T>(x, ldx, weight, k), [&](auto width) {
            constexpr int W = decltype(width)::value;
            with_rows(rows, [&](auto r) {
                constexpr int R = decltype(r)::value;
                with_split(split, [&](auto s) {
                    constexpr int S = decltype(s)::value;
                    linear_rows_kernel<T, W, R, S><<<blocks, kThreads, 0, stream>>>(
                        static_cast<const T*>(x), ldx, static_cast<const T*>(weight),
                        static_cast<const T*>(bias), static_cast<T*>(y), ldy, rows, k,
                        features);
                });
            });
        });
    });
    check_launch("linear rows");
}

}  // namespace iostune
