// Group normalisation (and instance normalisation: a group per channel). One thread block per
// (image, group) walks the group's channels and pixels three times: the mean, the mean squared
// deviation (two passes, as the CPU reference, so a large mean does not cancel the variance
// away), then the normalised, scaled and shifted output. See op_kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "src/engine/kernel_support.cuh"
#include "src/engine/op_kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

constexpr int kWarp = 32;
constexpr int kMaxThreads = 512;

// Element i of one image's group: NCHW keeps a group's channels as consecutive planes (offset i);
// NHWC keeps its channels consecutive inside each pixel.
struct GroupWalk {
    int64_t row_stride = 0;  // of the view
    int channels = 0;        // per group
    int64_t pixels = 0;      // per image
    bool nhwc = false;
    __device__ __forceinline__ int64_t offset(int64_t i, int& channel) const {
        if (!nhwc) {
            int64_t p = 0;
            channel = int(index_div(i, pixels, p));
            return i;
        }
        int64_t c = 0;
        const int64_t pixel = index_div(i, channels, c);
        channel = int(c);
        return pixel * row_stride + c;
    }
    // Where image n's group g starts.
    __device__ __forceinline__ int64_t origin(int64_t n, int g) const {
        const int64_t first = int64_t(g) * channels;
        return nhwc ? n * pixels * row_stride + first : n * row_stride + first * pixels;
    }
};

// The sum over the block (every thread gets it).
__device__ float block_sum(float v, float* partial) {
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    const int warp = int(threadIdx.x) / kWarp, lane = int(threadIdx.x) % kWarp;
    const int warps = int(blockDim.x) / kWarp;
    __syncthreads();  // `partial` may still be read from the previous call
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < warps; ++w) total += partial[w];
    return total;
}

template <class T>
__global__ void group_norm_kernel(const T* in, GroupWalk in_walk, T* out, GroupWalk out_walk,
                                  int groups, const T* gamma, const T* beta, float eps) {
    __shared__ float partial[kMaxThreads / kWarp];
    const int g = int(blockIdx.x) % groups;
    const int64_t n = blockIdx.x / groups;
    const T* x = in + in_walk.origin(n, g);
    T* y = out + out_walk.origin(n, g);
    const int64_t count = int64_t(in_walk.channels) * in_walk.pixels;
    int channel = 0;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
        sum += load(x + in_walk.offset(i, channel));
    const float mean = block_sum(sum, partial) / float(count);
    float squares = 0.0f;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
        const float d = load(x + in_walk.offset(i, channel)) - mean;
        squares += d * d;
    }
    const float inv_std = rsqrtf(block_sum(squares, partial) / float(count) + eps);
    const int first = g * in_walk.channels;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
        const float v = load(x + in_walk.offset(i, channel));
        const int64_t target = out_walk.offset(i, channel);  // the same channel in either walk
        const int c = first + channel;
        store(y + target, (v - mean) * inv_std * load(gamma + c) + load(beta + c));
    }
}

GroupWalk walk_of(const TensorView& v, int groups) {
    return GroupWalk{v.row_stride, v.c / groups, int64_t(v.h) * v.w, v.nhwc()};
}

}  // namespace

void launch_group_norm(const TensorView& in, const TensorView& out, const void* gamma,
                       const void* beta, int groups, float eps, cudaStream_t stream) {
    require_same_shape(in, out, "group norm");
    require_same_storage(in, out, "group norm");
    if (groups < 1 || out.c % groups != 0)
        throw Error(fmt::format("group norm: {} channels do not split into {} groups", out.c,
                                groups));
    const int64_t blocks = int64_t(out.n) * groups;
    if (out.elements() == 0) return;
    if (blocks > INT32_MAX)
        throw Error(
            fmt::format("group norm: {} images x {} groups exceed the grid", out.n, groups));
    // A warp per 32 elements of a group, up to kMaxThreads: small groups (instance norm of a
    // small map) do not idle most of a large block.
    const int64_t count = int64_t(out.c / groups) * out.h * out.w;
    const int threads = int(std::min<int64_t>(kMaxThreads, (count + kWarp - 1) / kWarp * kWarp));
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        group_norm_kernel<T><<<unsigned(blocks), unsigned(threads), 0, stream>>>(
            static_cast<const T*>(in.data), walk_of(in, groups), static_cast<T*>(out.data),
            walk_of(out, groups), groups, static_cast<const T*>(gamma),
            static_cast<const T*>(beta), eps);
    });
    check_launch("group norm");
}

}  // namespace iostune
