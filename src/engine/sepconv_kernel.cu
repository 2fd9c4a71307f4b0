// The engine's fused separable convolution, channels-last (launch_sepconv_nhwc, kernels.h):
// ReLU -> depthwise -> pointwise in one launch, the depthwise result kept in shared memory.
//
// Why: at batch 1 a separable convolution's two launches (the depthwise kernel, then a 1x1
// product) cost mostly their fixed times. NASNet-A's 220 at batch 1 TF32 took 9.8 us each on
// average against a 0.6 us roofline, and they were 71% of its op sum (docs/search-log.md,
// "Separable convolutions in one kernel"). One kernel also keeps the intermediate tensor on chip
// and takes a pre-ReLU as it loads, whichever depthwise kernel the two-step form would run.
//
// Layout of the work: a block owns P output pixels (numbered over batch, rows and columns) and
// KT output channels. It first computes the depthwise result of its P pixels for every input
// channel into shared memory (P x C floats; the blocks of the other channel tiles compute it
// again), then the pointwise product over C in chunks of kChunk input channels, each chunk's
// filter slice staged in shared memory transposed ([c][k]). A thread accumulates 4 pixels x 4
// output channels in fp32 (FMA, not tensor cores: the products are small and the tile must
// stay resident). Tiles are timed against the two-step form per signature (sepconv_form.cpp).
#include <cuda_runtime.h>

#include "src/engine/kernel_support.cuh"
#include "src/engine/kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

constexpr int kChunk = 16;  // input channels per staged filter slice
constexpr int kQuad = 4;    // a thread's pixels, and its output channels

template <int P, int KT>
__host__ __device__ constexpr int tile_threads() {
    return (P / kQuad) * (KT / kQuad);
}

struct SepConvArgs {
    int64_t pixels = 0;  // n * out_h * out_w
    int in_stride = 0, out_stride = 0, channels = 0, padded_channels = 0, out_channels = 0;
    int in_h = 0, in_w = 0, out_h = 0, out_w = 0;
    DepthwiseGeometry g;
    bool relu_input = false, relu_output = false;
};

// The depthwise result's row per pixel: the channels rounded up to whole chunks (zeros past C,
// so the product's loop never branches), plus one float so that the two pixel rows a warp reads
// at once fall in different banks.
__host__ __device__ inline int depthwise_row(int padded_channels) { return padded_channels + 1; }

template <int KT>
__host__ __device__ constexpr int filter_row() {
    return KT + kQuad;  // keeps 16-byte reads aligned; staging writes meet at most 2 to a bank
}

template <class T, int P, int KT>
__global__ void __launch_bounds__(tile_threads<P, KT>())
    sepconv_nhwc_kernel(const T* __restrict__ in, T* __restrict__ out,
                        const T* __restrict__ depthwise_weight,
                        const T* __restrict__ pointwise_weight, const T* __restrict__ bias,
                        SepConvArgs a) {
    extern __shared__ float shared[];
    constexpr int kThreadsHere = tile_threads<P, KT>();
    const int row = depthwise_row(a.padded_channels);
    float* depthwise = shared;                 // [P][row]
    float* filter = shared + P * row;          // [kChunk][filter_row]
    const int t = int(threadIdx.x);
    const int64_t first_pixel = int64_t(blockIdx.x) * P;
    const int k0 = int(blockIdx.y) * KT;
    const DepthwiseGeometry& g = a.g;

    // 1. The depthwise result of the block's pixels, every input channel.
    for (int i = t; i < P * a.padded_channels; i += kThreadsHere) {
        const int p = i / a.padded_channels;
        const int c = i - p * a.padded_channels;
        const int64_t pixel = first_pixel + p;
        float acc = 0.0f;
        if (c < a.channels && pixel < a.pixels) {
            int64_t rem = 0;
            const int64_t image_row = index_div(pixel, a.out_w, rem);
            const int ox = int(rem);
            const int64_t n = index_div(image_row, a.out_h, rem);
            const int oy = int(rem);
            const T* image = in + n * a.in_h * a.in_w * int64_t(a.in_stride) + c;
            for (int ky = 0; ky < g.kernel_h; ++ky) {
                const int iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
                if (iy < 0 || iy >= a.in_h) continue;
                for (int kx = 0; kx < g.kernel_w; ++kx) {
                    const int ix = ox * g.stride_w - g.pad_w + kx * g.dilation_w;
                    if (ix < 0 || ix >= a.in_w) continue;
                    float v = load(image + (int64_t(iy) * a.in_w + ix) * a.in_stride);
                    if (a.relu_input) v = fmaxf(v, 0.0f);
                    acc += v * load(depthwise_weight + (ky * g.kernel_w + kx) * a.channels + c);
                }
            }
        }
        depthwise[p * row + c] = acc;
    }

    // 2. The pointwise product: out[p][k] = sum_c depthwise[p][c] * weight[k][c].
    const int tk = t % (KT / kQuad);
    const int tp = t / (KT / kQuad);
    float acc[kQuad][kQuad] = {};
    for (int c0 = 0; c0 < a.padded_channels; c0 += kChunk) {
        __syncthreads();  // the depthwise result is written; the last chunk's slice is read
        for (int i = t; i < KT * kChunk; i += kThreadsHere) {
            const int kk = i / kChunk;
            const int cc = i - kk * kChunk;
            const int k = k0 + kk, c = c0 + cc;
            filter[cc * filter_row<KT>() + kk] =
                k < a.out_channels && c < a.channels
                    ? load(pointwise_weight + int64_t(k) * a.channels + c)
                    : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int cc = 0; cc < kChunk; ++cc) {
            const float4 w =
                *reinterpret_cast<const float4*>(filter + cc * filter_row<KT>() + tk * kQuad);
#pragma unroll
            for (int i = 0; i < kQuad; ++i) {
                const float x = depthwise[(tp * kQuad + i) * row + c0 + cc];
                acc[i][0] += x * w.x;
                acc[i][1] += x * w.y;
                acc[i][2] += x * w.z;
                acc[i][3] += x * w.w;
            }
        }
    }

    // 3. Bias, ReLU, store.
#pragma unroll
    for (int i = 0; i < kQuad; ++i) {
        const int64_t pixel = first_pixel + tp * kQuad + i;
        if (pixel >= a.pixels) break;
        T* y = out + pixel * a.out_stride;
#pragma unroll
        for (int j = 0; j < kQuad; ++j) {
            const int k = k0 + tk * kQuad + j;
            if (k >= a.out_channels) break;
            float v = acc[i][j] + (bias != nullptr ? load(bias + k) : 0.0f);
            if (a.relu_output) v = fmaxf(v, 0.0f);
            store(y + k, v);
        }
    }
}

int padded(int channels) { return (channels + kChunk - 1) / kChunk * kChunk; }

size_t shared_bytes(const SepConvTile& tile, int channels) {
    return sizeof(float) * (size_t(tile.pixels) * size_t(depthwise_row(padded(channels))) +
                            size_t(kChunk) * size_t(tile.channels + kQuad));
}

// Calls f(T{}, integral_constant P, integral_constant KT) for the tile, false for an unknown one.
template <class F>
bool with_tile(const SepConvTile& tile, F&& f) {
    using std::integral_constant;
    if (tile.pixels == 16 && tile.channels == 64) return f(integral_constant<int, 16>{}, integral_constant<int, 64>{}), true;
    if (tile.pixels == 32 && tile.channels == 64) return f(integral_constant<int, 32>{}, integral_constant<int, 64>{}), true;
    if (tile.pixels == 64 && tile.channels == 64) return f(integral_constant<int, 64>{}, integral_constant<int, 64>{}), true;
    if (tile.pixels == 16 && tile.channels == 128) return f(integral_constant<int, 16>{}, integral_constant<int, 128>{}), true;
    if (tile.pixels == 32 && tile.channels == 128) return f(integral_constant<int, 32>{}, integral_constant<int, 128>{}), true;
    return false;
}

}  // namespace

std::vector<SepConvTile> sepconv_tiles() { return {{16, 64}, {32, 64}, {64, 64}, {16, 128}, {32, 128}}; }

bool sepconv_fits(const SepConvTile& tile, int channels, DType dtype) {
    int device = 0, most = 0;
    IOSTUNE_CUDA_CHECK(cudaGetDevice(&device), "reading the current device");
    IOSTUNE_CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                       "reading the device's shared memory per block");
    const size_t bytes = shared_bytes(tile, channels);
    if (bytes > size_t(most)) return false;
    // Past 48 KiB a kernel must opt in; done here, on the planning side of any stream capture.
    bool known = false;
    dispatch(dtype, [&](auto t) {
        using T = decltype(t);
        known = with_tile(tile, [&](auto p, auto kt) {
            constexpr int P = decltype(p)::value, KT = decltype(kt)::value;
            IOSTUNE_CUDA_CHECK(cudaFuncSetAttribute(sepconv_nhwc_kernel<T, P, KT>,
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    int(bytes)),
                               "letting the fused separable convolution use its shared memory");
        });
    });
    return known;
}

void launch_sepconv_nhwc(const SepConvLaunch& s, cudaStream_t stream) {
    const TensorView& in = s.in;
    const TensorView& out = s.out;
    require_same_storage(in, out, "fused separable convolution");
    if (!in.nhwc() || in.n != out.n)
        throw Error(fmt::format("fused separable convolution: needs channels-last views of one "
                                "batch, got {} {}x{}x{}x{} -> {}x{}x{}x{}",
                                to_string(in.layout), in.n, in.c, in.h, in.w, out.n, out.c, out.h,
                                out.w));
    if (out.elements() == 0) return;
    SepConvArgs a;
    a.pixels = int64_t(out.n) * out.h * out.w;
    a.in_stride = int(in.row_stride), a.out_stride = int(out.row_stride);
    a.channels = in.c, a.padded_channels = padded(in.c), a.out_channels = out.c;
    a.in_h = in.h, a.in_w = in.w, a.out_h = out.h, a.out_w = out.w;
    a.g = s.geometry;
    a.relu_input = s.relu_input, a.relu_output = s.relu_output;
    const size_t bytes = shared_bytes(s.tile, in.c);
    bool known = false;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        known = with_tile(s.tile, [&](auto p, auto kt) {
            constexpr int P = decltype(p)::value, KT = decltype(kt)::value;
            const dim3 grid(unsigned((a.pixels + P - 1) / P), unsigned((out.c + KT - 1) / KT));
            sepconv_nhwc_kernel<T, P, KT><<<grid, tile_threads<P, KT>(), bytes, stream>>>(
                static_cast<const T*>(in.data), static_cast<T*>(out.data),
                static_cast<const T*>(s.depthwise_weight), static_cast<const T*>(s.pointwise_weight),
                static_cast<const T*>(s.bias), a);
        });
    });
    if (!known)
        throw Error(fmt::format("fused separable convolution: no kernel for a tile of {} pixels x "
                                "{} channels", s.tile.pixels, s.tile.channels));
    check_launch("fused separable convolution");
}

}  // namespace iostune
