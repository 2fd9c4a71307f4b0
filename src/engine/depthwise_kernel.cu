// The engine's channels-last depthwise convolution (launch_depthwise_nhwc, kernels.h).
//
// Layout of the work: a thread computes W consecutive channels (one vector pack) of TX
// neighbouring output pixels of one output row; a block covers consecutive (pixel strip, pack)
// pairs of one row, and the grid is (row pieces, out_h, batch). Neighbouring threads therefore
// read neighbouring channels and pixels (coalesced), each weight pack a thread loads serves its
// TX pixels, and all index arithmetic is 32-bit and per row. The first version ran one thread
// per (pixel, pack) in a grid-stride loop and spent most of its time in 64-bit divisions
// recovering (n, y, x, c) from a flat index: RandWire b16 fp16's depthwise convolutions ran at
// 17x their roofline (results/device/precision/breakdown.md).
//
// The kernel size is a template parameter for the common 3, 5 and 7 (0: any size, read from
// the geometry) so the taps unroll; TX is 4, 2 or 1 by how many output packs there are (batch
// 1's small maps need every thread they can get). Square filters of stride 1 or 2 without
// dilation take the sliding-window kernel, the rest the generic one. Those shapes also have a
// tiled kernel (shared memory, a thread per channel and output row), a variant of its own that
// the planner times beside the others (DepthwiseVariant).
#include <cuda_runtime.h>

#include "src/engine/activation.cuh"
#include "src/engine/kernel_support.cuh"
#include "src/engine/kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

template <class T, int W, int K, int TX>
__global__ void __launch_bounds__(kThreads)
    depthwise_nhwc_kernel(const T* __restrict__ in, int in_stride, T* __restrict__ out,
                          int out_stride, const T* __restrict__ weight, const T* __restrict__ bias,
                          int channels, int in_h, int in_w, int out_h, int out_w,
                          DepthwiseGeometry g, bool relu_input, OutputActivation act) {
    using P = Pack<T, W>;
    const int packs = channels / W;
    const int strips = (out_w + TX - 1) / TX;
    const int t = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
    if (t >= packs * strips) return;
    const int strip = t / packs;
    const int c0 = (t - strip * packs) * W;
    const int oy = int(blockIdx.y);
    const int64_t n = blockIdx.z;
    const int kernel_h = K > 0 ? K : g.kernel_h;
    const int kernel_w = K > 0 ? K : g.kernel_w;

    float acc[TX][W];
    for (int j = 0; j < W; ++j) {
        const float b = bias != nullptr ? load(bias + c0 + j) : 0.0f;
        for (int p = 0; p < TX; ++p) acc[p][j] = b;
    }
    const T* image = in + n * in_h * in_w * int64_t(in_stride) + c0;
    const int iy0 = oy * g.stride_h - g.pad_h;
    const int ix0 = strip * TX * g.stride_w - g.pad_w;
#pragma unroll
    for (int ky = 0; ky < kernel_h; ++ky) {
        const int iy = iy0 + ky * g.dilation_h;
        if (iy < 0 || iy >= in_h) continue;
        const T* row = image + int64_t(iy) * in_w * in_stride;
#pragma unroll
        for (int kx = 0; kx < kernel_w; ++kx) {
            const P w = *reinterpret_cast<const P*>(weight + (ky * kernel_w + kx) * channels + c0);
            float wf[W];
            for (int j = 0; j < W; ++j) wf[j] = load(&w.e[j]);
#pragma unroll
            for (int p = 0; p < TX; ++p) {
                const int ix = ix0 + p * g.stride_w + kx * g.dilation_w;
                if (ix < 0 || ix >= in_w) continue;
                const P x = *reinterpret_cast<const P*>(row + ix * in_stride);
                for (int j = 0; j < W; ++j) {
                    const float v = load(&x.e[j]);
                    acc[p][j] += (relu_input ? fmaxf(v, 0.0f) : v) * wf[j];
                }
            }
        }
    }
    T* out_row = out + ((n * out_h + oy) * out_w) * int64_t(out_stride) + c0;
#pragma unroll
    for (int p = 0; p < TX; ++p) {
        const int ox = strip * TX + p;
        if (ox >= out_w) break;
        P y;
        for (int j = 0; j < W; ++j) store(&y.e[j], activate<T>(act, acc[p][j], c0 + j));
        *reinterpret_cast<P*>(out_row + ox * out_stride) = y;
    }
}

// The fast path for square K x K filters of stride S (1 or 2) and no dilation, the shapes of
// every separable convolution in NASNet and RandWire. Each filter row is one straight line of
// loads: the (TX - 1) * S + K input packs the thread's TX pixels touch (a sliding window, each
// read once) and the row's K weight packs, predicated instead of branched around (an input
// outside the image reads as zero), so they are all in flight together; then the FMAs. The
// generic kernel above branches around each tap and loads as it goes, and measured latency-bound
// on the H100 (L1 scoreboard stalls, 27% of memory throughput at 14x14x616, batch 16).
template <class T, int W, int K, int S, int TX>
__device__ __forceinline__ void depthwise_window(const T* __restrict__ in, int in_stride,
                                                 T* __restrict__ out, int out_stride,
                                                 const T* __restrict__ weight,
                                                 const T* __restrict__ bias, int channels,
                                                 int in_h, int in_w, int out_h, int out_w,
                                                 int pad_h, int pad_w, bool relu_input,
                                                 const OutputActivation& act, int64_t n) {
    using P = Pack<T, W>;
    constexpr int kSpan = (TX - 1) * S + K;
    const int packs = channels / W;
    const int strips = (out_w + TX - 1) / TX;
    const int t = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
    if (t >= packs * strips) return;
    const int strip = t / packs;
    const int c0 = (t - strip * packs) * W;
    const int oy = int(blockIdx.y);

    float acc[TX][W];
#pragma unroll
    for (int j = 0; j < W; ++j) {
        const float b = bias != nullptr ? load(bias + c0 + j) : 0.0f;
#pragma unroll
        for (int p = 0; p < TX; ++p) acc[p][j] = b;
    }
    const T* image = in + n * in_h * in_w * int64_t(in_stride) + c0;
    const int iy0 = oy * S - pad_h;
    const int ix0 = strip * TX * S - pad_w;
#pragma unroll
    for (int ky = 0; ky < K; ++ky) {
        const int iy = iy0 + ky;
        const bool row_valid = iy >= 0 && iy < in_h;
        const T* row = image + int64_t(row_valid ? iy : 0) * in_w * in_stride;
        P x[kSpan];
#pragma unroll
        for (int i = 0; i < kSpan; ++i) {
            const int ix = ix0 + i;
            const bool valid = row_valid && ix >= 0 && ix < in_w;
            x[i] = valid ? *reinterpret_cast<const P*>(row + (valid ? ix : 0) * in_stride) : P{};
        }
        P w[K];
#pragma unroll
        for (int kx = 0; kx < K; ++kx)
            w[kx] = *reinterpret_cast<const P*>(weight + (ky * K + kx) * channels + c0);
#pragma unroll
        for (int i = 0; i < kSpan; ++i) {
#pragma unroll
            for (int j = 0; j < W; ++j) {
                float v = load(&x[i].e[j]);
                if (relu_input) v = fmaxf(v, 0.0f);
#pragma unroll
                for (int p = 0; p < TX; ++p) {
                    const int kx = i - p * S;
                    if (kx >= 0 && kx < K) acc[p][j] += v * load(&w[kx].e[j]);
                }
            }
        }
    }
    T* out_row = out + ((n * out_h + oy) * out_w) * int64_t(out_stride) + c0;
#pragma unroll
    for (int p = 0; p < TX; ++p) {
        const int ox = strip * TX + p;
        if (ox >= out_w) break;
        P y;
#pragma unroll
        for (int j = 0; j < W; ++j)
            store(&y.e[j], activate<T>(act, acc[p][j], c0 + j));
        *reinterpret_cast<P*>(out_row + ox * out_stride) = y;
    }
}

template <class T, int W, int K, int S, int TX>
__global__ void __launch_bounds__(kThreads)
    depthwise_nhwc_window_kernel(const T* __restrict__ in, int in_stride, T* __restrict__ out,
                                 int out_stride, const T* __restrict__ weight,
                                 const T* __restrict__ bias, int channels, int in_h, int in_w,
                                 int out_h, int out_w, int pad_h, int pad_w, bool relu_input,
                                 OutputActivation act) {
    depthwise_window<T, W, K, S, TX>(in, int(in_stride), out, out_stride, weight, bias, channels,
                                     in_h, in_w, out_h, out_w, pad_h, pad_w, relu_input, act,
                                     blockIdx.z);
}

// A batched merge's depthwise convolutions of one kernel size: grid z runs over (job, image).
struct WindowJob {
    const void* in;
    void* out;
    const void* weight;
    int in_stride, out_stride, pad_h, pad_w;
    bool relu_input;
};
constexpr int kMaxWindowJobs = 8;
struct WindowJobs {
    WindowJob job[kMaxWindowJobs];
};

template <class T, int W, int K, int S, int TX>
__global__ void __launch_bounds__(kThreads)
    depthwise_nhwc_window_batched_kernel(WindowJobs jobs, int images, int channels, int in_h,
                                         int in_w, int out_h, int out_w) {
    const WindowJob& j = jobs.job[blockIdx.z / unsigned(images)];
    depthwise_window<T, W, K, S, TX>(static_cast<const T*>(j.in), j.in_stride,
                                     static_cast<T*>(j.out), j.out_stride,
                                     static_cast<const T*>(j.weight), nullptr, channels, in_h,
                                     in_w, out_h, out_w, j.pad_h, j.pad_w, j.relu_input,
                                     OutputActivation{}, blockIdx.z % unsigned(images));
}

// The tiled kernel (DepthwiseVariant::Tiled) for the window kernel's shapes. ncu on NASNet-A's
// depthwise convolutions at batch 1 (docs/search-log.md, forty-seventh session) found the kernels
// above instruction-bound: 17 instructions per tap, most of them the bounds predicates and
// addresses every tap recomputes. Here a block of 32 x rows threads takes 32 consecutive channels
// of a tile of `rows` output rows by kTiledCols<S> columns. It stages the input the tile reads,
// halo and padding included, in shared memory as float (pre-ReLU applied once per element, zero
// outside the image): W-channel vector loads, kStagingBatch of them in flight per thread before
// any is stored. Then each thread (a lane per channel: no bank conflicts) slides its channel's
// filter, held in registers, along one output row: per filter row, one load of the window and
// K FMAs per output, no checks.
template <int S>
constexpr int kTiledCols = S == 1 ? 8 : 4;
constexpr int kTiledChannels = 32;
constexpr int kStagingBatch = 4;

template <class T, int W, int K, int S>
__global__ void __launch_bounds__(kTiledChannels * 8)
    depthwise_nhwc_tiled_kernel(const T* __restrict__ in, int in_stride, T* __restrict__ out,
                                int out_stride, const T* __restrict__ weight,
                                const T* __restrict__ bias, int channels, int in_h, int in_w,
                                int out_h, int out_w, int pad_h, int pad_w, int tiles_x,
                                bool relu_input, OutputActivation act) {
    using P = Pack<T, W>;
    constexpr int kCols = kTiledCols<S>;
    constexpr int kInCols = (kCols - 1) * S + K;
    constexpr int kPacks = kTiledChannels / W;  // packs of a staged pixel
    extern __shared__ float tile[];             // [in rows][kInCols][kTiledChannels]
    const int lane = int(threadIdx.x);
    const int rows = int(blockDim.y);
    const int threads = kTiledChannels * rows;
    const int thread = int(threadIdx.y) * kTiledChannels + lane;
    const int staged = ((rows - 1) * S + K) * kInCols * kPacks;
    const int tile_y = int(blockIdx.x) / tiles_x;
    const int oy0 = tile_y * rows;
    const int ox0 = (int(blockIdx.x) - tile_y * tiles_x) * kCols;
    const int c_block = int(blockIdx.y) * kTiledChannels;
    const int64_t n = blockIdx.z;
    const T* image = in + n * in_h * in_w * int64_t(in_stride) + c_block;
    const int iy0 = oy0 * S - pad_h;
    const int ix0 = ox0 * S - pad_w;
    for (int first = thread; first < staged; first += kStagingBatch * threads) {
        P x[kStagingBatch];
#pragma unroll
        for (int u = 0; u < kStagingBatch; ++u) {
            const int i = first + u * threads;
            const int pos = i / kPacks;
            const int r = pos / kInCols;
            const int iy = iy0 + r;
            const int ix = ix0 + (pos - r * kInCols);
            const int c = (i - pos * kPacks) * W;
            const bool valid = i < staged && c_block + c < channels && iy >= 0 && iy < in_h &&
                               ix >= 0 && ix < in_w;
            x[u] = valid ? *reinterpret_cast<const P*>(
                               image + (valid ? (iy * in_w + ix) * int64_t(in_stride) + c : 0))
                         : P{};
        }
#pragma unroll
        for (int u = 0; u < kStagingBatch; ++u) {
            const int i = first + u * threads;
            if (i >= staged) break;
            float v[W];
#pragma unroll
            for (int j = 0; j < W; ++j) {
                v[j] = load(&x[u].e[j]);
                if (relu_input) v[j] = fmaxf(v[j], 0.0f);
            }
            if constexpr (W % 4 == 0) {
#pragma unroll
                for (int j = 0; j < W; j += 4)
                    *reinterpret_cast<float4*>(tile + i * W + j) =
                        make_float4(v[j], v[j + 1], v[j + 2], v[j + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < W; ++j) tile[i * W + j] = v[j];
            }
        }
    }
    const int c = c_block + lane;
    const bool channel_valid = c < channels;
    float w[K * K];
#pragma unroll
    for (int i = 0; i < K * K; ++i) w[i] = channel_valid ? load(weight + i * channels + c) : 0.0f;
    __syncthreads();
    const int oy = oy0 + int(threadIdx.y);
    if (!channel_valid || oy >= out_h) return;

    float acc[kCols];
    const float b = bias != nullptr ? load(bias + c) : 0.0f;
#pragma unroll
    for (int p = 0; p < kCols; ++p) acc[p] = b;
#pragma unroll
    for (int ky = 0; ky < K; ++ky) {
        const float* row = tile + (int(threadIdx.y) * S + ky) * kInCols * kTiledChannels + lane;
        float x[kInCols];
#pragma unroll
        for (int i = 0; i < kInCols; ++i) x[i] = row[i * kTiledChannels];
#pragma unroll
        for (int p = 0; p < kCols; ++p)
#pragma unroll
            for (int kx = 0; kx < K; ++kx) acc[p] += x[p * S + kx] * w[ky * K + kx];
    }
    T* out_row = out + ((n * out_h + oy) * out_w + ox0) * int64_t(out_stride) + c;
#pragma unroll
    for (int p = 0; p < kCols; ++p)
        if (ox0 + p < out_w) store(out_row + p * out_stride, activate<T>(act, acc[p], c));
}

// The tile's rows: the most of 8, 4, 2, 1 that still gives every SM two blocks (batch 1's small
// maps need the blocks more than the halo they share); the staging packs as wide as the input
// allows. Then the launch.
template <class T, int K, int S>
void launch_tiled(const TensorView& in, const TensorView& out, const void* weight,
                  const void* bias, const DepthwiseGeometry& g, bool relu_input,
                  const OutputActivation& act, cudaStream_t stream) {
    constexpr int kCols = kTiledCols<S>;
    const int64_t wanted_blocks = resident_threads() / 1024;  // two per SM (2048 threads each)
    const int tiles_x = (out.w + kCols - 1) / kCols;
    const int64_t channel_blocks = (out.c + kTiledChannels - 1) / kTiledChannels;
    int rows = 8;
    while (rows > 1 && tiles_x * channel_blocks * out.n * ((out.h + rows - 1) / rows) <
                           wanted_blocks)
        rows /= 2;
    const dim3 grid(unsigned(tiles_x * ((out.h + rows - 1) / rows)), unsigned(channel_blocks),
                    unsigned(out.n));
    const dim3 threads(kTiledChannels, unsigned(rows));
    const size_t shared =
        size_t((rows - 1) * S + K) * ((kCols - 1) * S + K) * kTiledChannels * sizeof(float);
    with_width(vector_width<T>({in}), [&](auto width) {
        constexpr int W = decltype(width)::value;
        if constexpr (W * sizeof(T) <= 16)
            depthwise_nhwc_tiled_kernel<T, W, K, S><<<grid, threads, shared, stream>>>(
                static_cast<const T*>(in.data), int(in.row_stride), static_cast<T*>(out.data),
                int(out.row_stride), static_cast<const T*>(weight), static_cast<const T*>(bias),
                out.c, in.h, in.w, out.h, out.w, g.pad_h, g.pad_w, tiles_x, relu_input, act);
    });
}

// Calls f(std::integral_constant<int, K>) with K the specialised kernel size, or 0.
template <class F>
void with_kernel_size(const DepthwiseGeometry& g, F&& f) {
    const int k = g.kernel_h == g.kernel_w ? g.kernel_h : 0;
    switch (k) {
        case 3: f(std::integral_constant<int, 3>{}); return;
        case 5: f(std::integral_constant<int, 5>{}); return;
        case 7: f(std::integral_constant<int, 7>{}); return;
        default: f(std::integral_constant<int, 0>{}); return;
    }
}

// A thread takes a strip of TX output pixels when the GPU stays busy with 1/TX of the threads:
// at least half of the device's resident threads at TX = 2 and 4. Strips share filter loads
// and, in the window kernel, input loads between neighbouring pixels; at 7x7 a thread per pixel
// measured 2.2x slower than PyTorch's kernel (84 channels, 42x42, batch 16, H100).
// with_strip calls f(std::integral_constant<int, TX>) with the strip width for `packs` packs.
template <class F>
void with_strip(int64_t packs, F&& f) {
    const int64_t half_resident = resident_threads() / 2;
    if (packs >= 4 * half_resident) f(std::integral_constant<int, 4>{});
    else if (packs >= 2 * half_resident) f(std::integral_constant<int, 2>{});
    else f(std::integral_constant<int, 1>{});
}

// Batch 1's small maps: with a pack of W channels per thread they give the GPU fewer threads
// than half it holds resident, and each thread then waits on its loads alone (NASNet-A's
// 11x11x672 7x7 filter in fp32: 20K threads of 270K, 16.2 us against cuDNN's 7.6). Narrowed,
// the pack halves until the threads reach that half (or one channel per thread); a warp's loads
// stay coalesced, 32 neighbouring channels. Faster alone, but a kernel of more threads leaves
// less room beside it: a choice of its own (DepthwiseVariant), timed like any other.
int pack_width(int widest, int64_t elements, DepthwiseVariant variant) {
    int w = widest;
    while (variant == DepthwiseVariant::Narrowed && w > 1 && elements / w < resident_threads() / 2)
        w /= 2;
    return w;
}

template <class T, int W, int K, int TX>
void launch(const TensorView& in, const TensorView& out, const void* weight, const void* bias,
            const DepthwiseGeometry& g, bool relu_input, const OutputActivation& act,
            cudaStream_t stream) {
    const RowLaunch shape(in, out, W, TX);
    const auto* x = static_cast<const T*>(in.data);
    auto* y = static_cast<T*>(out.data);
    const auto* w = static_cast<const T*>(weight);
    const auto* b = static_cast<const T*>(bias);
    const bool window = K > 0 && g.stride_h == g.stride_w && g.dilation_h == 1 &&
                        g.dilation_w == 1 && (g.stride_h == 1 || g.stride_h == 2);
    if constexpr (K > 0) {
        if (window && g.stride_h == 1) {
            depthwise_nhwc_window_kernel<T, W, K, 1, TX><<<shape.grid, shape.threads, 0, stream>>>(
                x, int(in.row_stride), y, int(out.row_stride), w, b, out.c, in.h, in.w, out.h,
                out.w, g.pad_h, g.pad_w, relu_input, act);
            return;
        }
        if (window) {
            depthwise_nhwc_window_kernel<T, W, K, 2, TX><<<shape.grid, shape.threads, 0, stream>>>(
                x, int(in.row_stride), y, int(out.row_stride), w, b, out.c, in.h, in.w, out.h,
                out.w, g.pad_h, g.pad_w, relu_input, act);
            return;
        }
    }
    depthwise_nhwc_kernel<T, W, K, TX><<<shape.grid, shape.threads, 0, stream>>>(
        x, int(in.row_stride), y, int(out.row_stride), w, b, out.c, in.h, in.w, out.h, out.w, g,
        relu_input, act);
}

}  // namespace

bool depthwise_packs_differ(const TensorView& in, const TensorView& out, const void* weight,
                            const void* bias) {
    bool differ = false;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        const int widest = vector_width<T>({in, out}, {weight, bias});
        differ = pack_width(widest, out.elements(), DepthwiseVariant::Narrowed) != widest;
    });
    return differ;
}

void launch_depthwise_nhwc(const TensorView& in, const TensorView& out, const void* weight,
                           const void* bias, const DepthwiseGeometry& g, bool relu_input,
                           const OutputActivation& act, DepthwiseVariant variant,
                           cudaStream_t stream) {
    require_same_storage(in, out, "depthwise");
    if (!in.nhwc() || in.c != out.c || in.n != out.n)
        throw Error(fmt::format("depthwise kernel: needs channels-last views of equal channels, "
                                "got {} {}x{}x{}x{} -> {}x{}x{}x{}",
                                to_string(in.layout), in.n, in.c, in.h, in.w, out.n, out.c, out.h,
                                out.w));
    if (out.elements() == 0) return;
    if (variant == DepthwiseVariant::Tiled) {
        if (!depthwise_tileable(g))
            throw Error(fmt::format("tiled depthwise kernel: needs a square 3, 5 or 7 filter of "
                                    "stride 1 or 2 without dilation, got {}x{} of stride {}x{}",
                                    g.kernel_h, g.kernel_w, g.stride_h, g.stride_w));
        dispatch(out.dtype, [&](auto t) {
            using T = decltype(t);
            with_kernel_size(g, [&](auto size) {
                constexpr int K = decltype(size)::value;
                if constexpr (K > 0) {
                    if (g.stride_h == 1)
                        launch_tiled<T, K, 1>(in, out, weight, bias, g, relu_input, act, stream);
                    else
                        launch_tiled<T, K, 2>(in, out, weight, bias, g, relu_input, act, stream);
                }
            });
        });
        check_launch("tiled depthwise");
        return;
    }
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        const int widest = vector_width<T>({in, out}, {weight, bias});
        with_width(pack_width(widest, out.elements(), variant), [&](auto width) {
            constexpr int W = decltype(width)::value;
            with_kernel_size(g, [&](auto size) {
                constexpr int K = decltype(size)::value;
                with_strip(out.elements() / W, [&](auto strip) {
                    constexpr int TX = decltype(strip)::value;
                    launch<T, W, K, TX>(in, out, weight, bias, g, relu_input, act, stream);
                });
            });
        });
    });
    check_launch("depthwise");
}

bool depthwise_tileable(const DepthwiseGeometry& g) {
    const int k = g.kernel_h;
    return g.kernel_w == k && (k == 3 || k == 5 || k == 7) && g.stride_h == g.stride_w &&
           (g.stride_h == 1 || g.stride_h == 2) && g.dilation_h == 1 && g.dilation_w == 1;
}

// The window kernel's shapes, which are the tiled kernel's.
bool depthwise_batchable(const DepthwiseGeometry& g) { return depthwise_tileable(g); }

void launch_depthwise_nhwc_batched(const std::vector<DepthwiseJob>& jobs, cudaStream_t stream) {
    if (jobs.empty()) return;
    const DepthwiseJob& first = jobs.front();
    for (const DepthwiseJob& j : jobs) {
        require_same_storage(j.in, first.in, "batched depthwise");
        require_same_storage(j.out, first.in, "batched depthwise");
        if (!j.in.nhwc() || !j.in.same_shape(first.in) || !j.out.same_shape(first.out) ||
            j.in.c != j.out.c || j.in.n != j.out.n || !depthwise_batchable(j.g) ||
            j.g.kernel_h != first.g.kernel_h || j.g.stride_h != first.g.stride_h)
            throw Error(fmt::format("batched depthwise kernel: jobs need channels-last views of "
                                    "one shape and one square 3/5/7 kernel of stride 1 or 2, got "
                                    "{}x{}x{}x{} -> {}x{}x{}x{} with a {}x{} kernel of stride {}",
                                    j.in.n, j.in.c, j.in.h, j.in.w, j.out.n, j.out.c, j.out.h,
                                    j.out.w, j.g.kernel_h, j.g.kernel_w, j.g.stride_h));
    }
    const TensorView& in = first.in;
    const TensorView& out = first.out;
    if (out.elements() == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        int width = 16 / int(sizeof(T));
        for (const DepthwiseJob& j : jobs)
            width = std::min(width, vector_width<T>({j.in, j.out}, {j.weight}));
        with_width(width, [&](auto w_constant) {
            constexpr int W = decltype(w_constant)::value;
            with_kernel_size(first.g, [&](auto size) {
                constexpr int K = decltype(size)::value;
                if constexpr (K > 0) {
                    // Strips as launch_depthwise_nhwc chooses them, over every job's packs.
                    with_strip(out.elements() / W * int64_t(jobs.size()), [&](auto strip) {
                        constexpr int TX = decltype(strip)::value;
                        for (size_t begin = 0; begin < jobs.size(); begin += kMaxWindowJobs) {
                            const size_t count = std::min(jobs.size() - begin, size_t(kMaxWindowJobs));
                            WindowJobs table{};
                            for (size_t k = 0; k < count; ++k) {
                                const DepthwiseJob& j = jobs[begin + k];
                                table.job[k] = {j.in.data, j.out.data, j.weight,
                                                int(j.in.row_stride), int(j.out.row_stride),
                                                j.g.pad_h, j.g.pad_w, j.relu_input};
                            }
                            RowLaunch shape(in, out, W, TX);
                            shape.grid.z = unsigned(out.n) * unsigned(count);
                            if (first.g.stride_h == 1)
                                depthwise_nhwc_window_batched_kernel<T, W, K, 1, TX>
                                    <<<shape.grid, shape.threads, 0, stream>>>(
                                        table, out.n, out.c, in.h, in.w, out.h, out.w);
                            else
                                depthwise_nhwc_window_batched_kernel<T, W, K, 2, TX>
                                    <<<shape.grid, shape.threads, 0, stream>>>(
                                        table, out.n, out.c, in.h, in.w, out.h, out.w);
                        }
                    });
                }
            });
        });
    });
    check_launch("batched depthwise");
}

}  // namespace iostune
