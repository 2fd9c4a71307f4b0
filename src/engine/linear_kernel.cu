// The engine's fully connected layer for a few rows (launch_linear_rows, kernels.h).
//
// At batch 1 a classifier's last layer is a matrix-vector product whose weights take well under
// a microsecond to read, yet cuBLAS ran it as a split-K product, its reduction and then the bias
// kernel: three launches on the critical path of every classifier, 8.9 us for NASNet-A's
// 4032 -> 1000 in fp16 and 11.3 us (gemv + bias) in fp32 on the H200 (session-2026-11-30e's
// profiles). Here one launch does it: a warp per output feature reads that feature's weights
// once, in vector packs, against each row's inputs, its lanes' partial sums meet by shuffles, and
// lane 0 adds the bias as it stores.
#include <cuda_runtime.h>

#include "src/engine/kernel_support.cuh"
#include "src/engine/kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

constexpr int kWarp = 32;

// R: rows rounded up to a power of two (the accumulators unroll); `rows` <= R are computed.
template <class T, int W, int R>
__global__ void __launch_bounds__(kThreads)
    linear_rows_kernel(const T* __restrict__ x, int64_t ldx, const T* __restrict__ weight,
                       const T* __restrict__ bias, T* __restrict__ y, int64_t ldy, int rows,
                       int k, int features) {
    using P = Pack<T, W>;
    const int feature = int((blockIdx.x * blockDim.x + threadIdx.x) / kWarp);
    const int lane = int(threadIdx.x % kWarp);
    if (feature >= features) return;  // whole warps leave together: the shuffles stay full
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = 0.0f;
    const T* w_row = weight + int64_t(feature) * k;
#pragma unroll 4
    for (int i = lane * W; i < k; i += kWarp * W) {
        const P w = *reinterpret_cast<const P*>(w_row + i);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            if (r >= rows) break;
            const P v = *reinterpret_cast<const P*>(x + r * ldx + i);
#pragma unroll
            for (int j = 0; j < W; ++j) acc[r] += load(&w.e[j]) * load(&v.e[j]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
        for (int offset = kWarp / 2; offset > 0; offset /= 2)
            acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], offset);
    if (lane != 0) return;
    const float b = bias != nullptr ? load(bias + feature) : 0.0f;
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (r < rows) store(y + r * ldy + feature, acc[r] + b);
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

}  // namespace

void launch_linear_rows(const void* x, int64_t ldx, const void* weight, const void* bias, void* y,
                        int64_t ldy, int rows, int k, int features, DType dtype,
                        cudaStream_t stream) {
    if (rows < 1 || rows > kLinearRowsMax || k < 1 || features < 1)
        throw Error(fmt::format("linear rows kernel: {} rows of {} inputs to {} features; it "
                                "takes 1 to {} rows",
                                rows, k, features, kLinearRowsMax));
    const int64_t blocks = (int64_t(features) * kWarp + kThreads - 1) / kThreads;
    dispatch(dtype, [&](auto t) {
        using T = decltype(t);
        with_width(linear_width<T>(x, ldx, weight, k), [&](auto width) {
            constexpr int W = decltype(width)::value;
            with_rows(rows, [&](auto r) {
                constexpr int R = decltype(r)::value;
                linear_rows_kernel<T, W, R><<<unsigned(blocks), kThreads, 0, stream>>>(
                    static_cast<const T*>(x), ldx, static_cast<const T*>(weight),
                    static_cast<const T*>(bias), static_cast<T*>(y), ldy, rows, k, features);
            });
        });
    });
    check_launch("linear rows");
}

}  // namespace iostune
