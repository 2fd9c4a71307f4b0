// Layer normalisation over the channels of each pixel (ConvNeXt's channels-last LayerNorm). The
// statistics take two passes (mean, then the mean squared deviation), as the CPU reference does,
// so large means do not cancel the variance away. See op_kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <cstdint>

#include "src/engine/kernel_support.cuh"
#include "src/engine/op_kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

constexpr int kWarp = 32;

// NCHW: one thread per pixel; the channels of a pixel are a plane apart, and neighbouring
// threads read neighbouring pixels of each plane.
template <class T>
__global__ void channel_norm_nchw_kernel(const T* in, int64_t in_stride, T* out,
                                         int64_t out_stride, int channels, int64_t plane,
                                         const T* gamma, const T* beta, float eps, int64_t total) {
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t p = 0;
        const int64_t n = index_div(i, plane, p);
        const T* x = in + n * in_stride + p;
        T* y = out + n * out_stride + p;
        float sum = 0.0f;
        for (int c = 0; c < channels; ++c) sum += load(x + c * plane);
        const float mean = sum / float(channels);
        float squares = 0.0f;
        for (int c = 0; c < channels; ++c) {
            const float d = load(x + c * plane) - mean;
            squares += d * d;
        }
        const float inv_std = rsqrtf(squares / float(channels) + eps);
        for (int c = 0; c < channels; ++c)
            store(y + c * plane,
                  (load(x + c * plane) - mean) * inv_std * load(gamma + c) + load(beta + c));
    }
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// NHWC: one warp per pixel, its lanes over the pixel's contiguous channels.
template <class T>
__global__ void channel_norm_nhwc_kernel(const T* in, int64_t in_stride, T* out,
                                         int64_t out_stride, int channels, const T* gamma,
                                         const T* beta, float eps, int64_t pixels) {
    const int lane = int(threadIdx.x) % kWarp;
    const int64_t warps = int64_t(gridDim.x) * blockDim.x / kWarp;
    for (int64_t pixel = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / kWarp; pixel < pixels;
         pixel += warps) {
        const T* x = in + pixel * in_stride;
        T* y = out + pixel * out_stride;
        float sum = 0.0f;
        for (int c = lane; c < channels; c += kWarp) sum += load(x + c);
        const float mean = warp_sum(sum) / float(channels);
        float squares = 0.0f;
        for (int c = lane; c < channels; c += kWarp) {
            const float d = load(x + c) - mean;
            squares += d * d;
        }
        const float inv_std = rsqrtf(warp_sum(squares) / float(channels) + eps);
        for (int c = lane; c < channels; c += kWarp)
            store(y + c, (load(x + c) - mean) * inv_std * load(gamma + c) + load(beta + c));
    }
}

}  // namespace

void launch_channel_norm(const TensorView& in, const TensorView& out, const void* gamma,
                         const void* beta, float eps, cudaStream_t stream) {
    require_same_shape(in, out, "channel norm");
    require_same_storage(in, out, "channel norm");
    const int64_t pixels = int64_t(out.n) * out.h * out.w;
    if (pixels == 0 || out.c == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        const auto* g = static_cast<const T*>(gamma);
        const auto* b = static_cast<const T*>(beta);
        if (out.nhwc()) {
            // Whole warps per block, so every lane of a warp walks the same pixels.
            channel_norm_nhwc_kernel<T><<<blocks_for(pixels * kWarp), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, out.c, g, b, eps, pixels);
        } else {
            channel_norm_nchw_kernel<T><<<blocks_for(pixels), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, out.c, int64_t(out.h) * out.w, g, b, eps, pixels);
        }
    });
    check_launch("channel norm");
}

}  // namespace iostune
