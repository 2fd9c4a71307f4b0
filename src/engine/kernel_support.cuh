// Device-side building blocks shared by the engine's kernels (kernels.cu, depthwise_kernel.cu, ...):
// element loads and stores that compute in float, vector packs of W elements, views' rows and
// logical indexing, launch sizing and checks, and the type and width dispatch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "src/engine/cuda_check.h"
#include "src/engine/tensor_view.h"
#include "src/error.h"

namespace iostune::kernel_support {

constexpr int kThreads = 256;

__device__ __forceinline__ float load(const float* p) { return *p; }
__device__ __forceinline__ float load(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// Quotient and remainder of a flat index by a positive divisor. A 64-bit division is emulated in
// some 70 instructions, a 32-bit one in about 20, and index arithmetic had dominated the engine's
// memory-bound kernels: every tensor this engine sees indexes below 2^32 elements, so that is
// the path taken; the 64-bit one stays for correctness.
__device__ __forceinline__ int64_t index_div(int64_t i, int64_t d, int64_t& rem) {
    if (((i | d) >> 32) == 0) {
        const uint32_t q = uint32_t(i) / uint32_t(d);
        rem = int64_t(uint32_t(i) - q * uint32_t(d));
        return q;
    }
    const int64_t q = i / d;
    rem = i - q * d;
    return q;
}

// Where flat element `i` of a view lives, counting elements in storage order (row after row):
// rows are batch items (NCHW) or pixels (NHWC), see tensor_view.h.
struct Rows {
    int64_t elements = 0;  // per row
    int64_t stride = 0;    // between rows
    __device__ __forceinline__ int64_t at(int64_t i) const {
        if (stride == elements) return i;
        int64_t col = 0;
        const int64_t row = index_div(i, elements, col);
        return row * stride + col;
    }
};

// Where logical element (n, c, y, x) of a view lives.
struct Indexer {
    int64_t row_stride = 0;
    int c = 0, h = 0, w = 0;
    bool nhwc = false;
    __device__ __forceinline__ int64_t at(int64_t n, int ch, int y, int x) const {
        return nhwc ? ((n * h + y) * w + x) * row_stride + ch
                    : n * row_stride + (int64_t(ch) * h + y) * w + x;
    }
    // The logical coordinates of the i-th element in this view's storage order.
    __device__ __forceinline__ void coordinates(int64_t i, int64_t& n, int& ch, int& y, int& x) const {
        int64_t r = 0;
        if (nhwc) {
            i = index_div(i, c, r), ch = int(r);
            i = index_div(i, w, r), x = int(r);
            n = index_div(i, h, r), y = int(r);
        } else {
            i = index_div(i, w, r), x = int(r);
            i = index_div(i, h, r), y = int(r);
            n = index_div(i, c, r), ch = int(r);
        }
    }
};

inline Indexer indexer_of(const TensorView& v) { return Indexer{v.row_stride, v.c, v.h, v.w, v.nhwc()}; }

inline unsigned blocks_for(int64_t count) {
    return unsigned(std::min<int64_t>((count + kThreads - 1) / kThreads, 65535LL * 16));
}

// Threads the current device holds resident at once (SMs x threads per SM), read once.
inline int64_t resident_threads() {
    static const int64_t threads = [] {
        int device = 0, sms = 0, per_sm = 0;
        IOSTUNE_CUDA_CHECK(cudaGetDevice(&device), "reading the current device");
        IOSTUNE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                           "reading the device's SM count");
        IOSTUNE_CUDA_CHECK(
            cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device),
            "reading the device's threads per SM");
        return int64_t(sms) * per_sm;
    }();
    return threads;
}

inline void check_launch(const char* kernel) {
    IOSTUNE_CUDA_CHECK(cudaGetLastError(), fmt::format("launching the {} kernel", kernel));
}

#define IOSTUNE_GRID_LOOP(i, total)                                          \
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (total); \
         i += int64_t(gridDim.x) * blockDim.x)

// Calls f(T{}) with T the C++ type of `type`.
template <class F>
void dispatch(DType type, F&& f) {
    switch (type) {
        case DType::F32: f(float{}); return;
        case DType::F16: f(__half{}); return;
        case DType::BF16: f(__nv_bfloat16{}); return;
    }
}

// Vector accesses: W consecutive elements per load and store, W the widest of 8/4/2/1 (16 bytes
// at most) that divides every operand's row length and row stride, with the data aligned to it:
// 16-byte accesses for channel counts in multiples of 8 (half), narrower ones for the rest
// (RandWire's 78 channels: 4 bytes).
template <class T, int W>
struct alignas(W * sizeof(T)) Pack {
    T e[W];
};

template <class T>
inline int vector_width(std::initializer_list<TensorView> views,
                 std::initializer_list<const void*> pointers = {}) {
    for (int w = 16 / int(sizeof(T)); w > 1; w /= 2) {
        const size_t bytes = size_t(w) * sizeof(T);
        bool fits = true;
        for (const TensorView& v : views)
            fits = fits && v.row_elements() % w == 0 && v.row_stride % w == 0 &&
                   reinterpret_cast<uintptr_t>(v.data) % bytes == 0;
        for (const void* p : pointers) fits = fits && reinterpret_cast<uintptr_t>(p) % bytes == 0;
        if (fits) return w;
    }
    return 1;
}

// Calls f(std::integral_constant<int, W>) for the width w.
template <class F>
void with_width(int w, F&& f) {
    switch (w) {
        case 8: f(std::integral_constant<int, 8>{}); return;
        case 4: f(std::integral_constant<int, 4>{}); return;
        case 2: f(std::integral_constant<int, 2>{}); return;
        default: f(std::integral_constant<int, 1>{}); return;
    }
}

// A view's rows, counted in packs of w elements.
inline Rows rows_of(const TensorView& v, int w) { return Rows{v.row_elements() / w, v.row_stride / w}; }

// The launch shape of the channels-last window kernels (depthwise, pooling): a thread per
// (strip of tx output pixels, pack of w channels), the threads of one output row of one image in
// consecutive blocks, the grid's y and z the output row and the image. Neighbouring threads read
// neighbouring channels and pixels, and a thread finds its place with one 32-bit division.
struct RowLaunch {
    dim3 grid;
    unsigned threads = 0;
    // Offsets inside one image row are 32-bit: in.w * in.row_stride must fit.
    RowLaunch(const TensorView& in, const TensorView& out, int w, int tx) {
        if (out.h > 65535 || out.n > 65535 || int64_t(in.w) * in.row_stride > INT32_MAX ||
            int64_t(out.w) * out.row_stride > INT32_MAX)
            throw Error(fmt::format("{}x{}x{}x{} -> {}x{}x{}x{} is beyond the channels-last "
                                    "kernels' grid",
                                    in.n, in.c, in.h, in.w, out.n, out.c, out.h, out.w));
        const int row_threads = (out.c / w) * ((out.w + tx - 1) / tx);
        threads = unsigned(std::min(kThreads, (row_threads + 31) / 32 * 32));
        grid = dim3(unsigned((row_threads + int(threads) - 1) / int(threads)), unsigned(out.h),
                    unsigned(out.n));
    }
};

inline void require_same_shape(const TensorView& a, const TensorView& b, const char* what) {
    if (!a.same_shape(b)) {
        throw Error(fmt::format("{}: input {}x{}x{}x{} and output {}x{}x{}x{} differ", what, a.n,
                                a.c, a.h, a.w, b.n, b.c, b.h, b.w));
    }
}

// Same element type and layout: what every kernel but convert needs of its operands.
inline void require_same_storage(const TensorView& a, const TensorView& b, const char* what) {
    if (a.dtype != b.dtype || a.layout != b.layout) {
        throw Error(fmt::format("{}: operands are {} {} and {} {}; the kernel needs one type and "
                                "layout",
                                what, to_string(a.dtype), to_string(a.layout), to_string(b.dtype),
                                to_string(b.layout)));
    }
}

}  // namespace iostune::kernel_support
