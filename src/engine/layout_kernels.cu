// Kernels that move elements between positions: ShuffleNet's channel shuffle, spatial resize
// (nearest, bilinear) and spatial zero padding / cropping. See op_kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <cstdint>

#include "src/engine/kernel_support.cuh"
#include "src/engine/op_kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

__device__ __forceinline__ int shuffled_source(int channel, int groups, int per_group) {
    return (channel % groups) * per_group + channel / groups;
}

// NCHW: each output channel plane is one input plane, moved in packs of W.
template <class T, int W>
__global__ void channel_shuffle_nchw_kernel(const T* in, int64_t in_stride, T* out,
                                            int64_t out_stride, int channels, int64_t plane_packs,
                                            int groups, int64_t total) {
    using P = Pack<T, W>;
    const int per_group = channels / groups;
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t p = 0, ch = 0;
        const int64_t plane = index_div(i, plane_packs, p);
        const int64_t n = index_div(plane, channels, ch);
        const int64_t src = shuffled_source(int(ch), groups, per_group);
        reinterpret_cast<P*>(out + n * out_stride)[ch * plane_packs + p] =
            reinterpret_cast<const P*>(in + n * in_stride)[src * plane_packs + p];
    }
}

// NHWC: a row is a pixel; neighbouring threads write neighbouring channels of it.
template <class T>
__global__ void channel_shuffle_nhwc_kernel(const T* in, int64_t in_stride, T* out,
                                            int64_t out_stride, int channels, int groups,
                                            int64_t total) {
    const int per_group = channels / groups;
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t ch = 0;
        const int64_t pixel = index_div(i, channels, ch);
        out[pixel * out_stride + ch] = in[pixel * in_stride + shuffled_source(int(ch), groups, per_group)];
    }
}

// Source taps along one axis: index `lo` weighted 1 - frac, `hi` weighted frac (the CPU
// reference's bilinear_taps; nearest: lo = hi, frac = 0).
struct Taps {
    int lo, hi;
    float frac;
};

__device__ __forceinline__ Taps taps_of(int dst, int in, int out, bool bilinear,
                                        bool align_corners) {
    if (!bilinear) {
        const int src = min(int(int64_t(dst) * in / out), in - 1);
        return {src, src, 0.0f};
    }
    float src = 0.0f;
    if (align_corners) {
        src = out > 1 ? float(dst) * float(in - 1) / float(out - 1) : 0.0f;
    } else {
        src = fmaxf(0.0f, (float(dst) + 0.5f) * float(in) / float(out) - 0.5f);
    }
    const int lo = min(int(src), in - 1);
    return {lo, min(lo + 1, in - 1), src - float(lo)};
}

// One thread per output (n, y, x) and pack of W channels (W = 1 in NCHW).
template <class T, int W>
__global__ void resize_kernel(const T* in, Indexer in_ix, T* out, Indexer out_ix, int64_t total,
                              bool bilinear, bool align_corners) {
    using P = Pack<T, W>;
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t n = 0;
        int ch = 0, y = 0, x = 0;
        out_ix.coordinates(i * W, n, ch, y, x);
        const Taps ty = taps_of(y, in_ix.h, out_ix.h, bilinear, align_corners);
        const Taps tx = taps_of(x, in_ix.w, out_ix.w, bilinear, align_corners);
        const P a = *reinterpret_cast<const P*>(in + in_ix.at(n, ch, ty.lo, tx.lo));
        P r;
        if (!bilinear) {
            r = a;
        } else {
            const P b = *reinterpret_cast<const P*>(in + in_ix.at(n, ch, ty.lo, tx.hi));
            const P c = *reinterpret_cast<const P*>(in + in_ix.at(n, ch, ty.hi, tx.lo));
            const P d = *reinterpret_cast<const P*>(in + in_ix.at(n, ch, ty.hi, tx.hi));
            for (int j = 0; j < W; ++j) {
                const float top = (1.0f - tx.frac) * load(&a.e[j]) + tx.frac * load(&b.e[j]);
                const float bottom = (1.0f - tx.frac) * load(&c.e[j]) + tx.frac * load(&d.e[j]);
                store(&r.e[j], (1.0f - ty.frac) * top + ty.frac * bottom);
            }
        }
        *reinterpret_cast<P*>(out + out_ix.at(n, ch, y, x)) = r;
    }
}

// One thread per output (n, y, x) and pack of W channels (W = 1 in NCHW): the input element
// `top` rows up and `left` columns left of it, or zero where that lies outside the input.
template <class T, int W>
__global__ void spatial_pad_kernel(const T* in, Indexer in_ix, T* out, Indexer out_ix,
                                   int64_t total, int top, int left) {
    using P = Pack<T, W>;
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t n = 0;
        int ch = 0, y = 0, x = 0;
        out_ix.coordinates(i * W, n, ch, y, x);
        const int sy = y - top, sx = x - left;
        P r;
        if (sy >= 0 && sy < in_ix.h && sx >= 0 && sx < in_ix.w) {
            r = *reinterpret_cast<const P*>(in + in_ix.at(n, ch, sy, sx));
        } else {
            for (int j = 0; j < W; ++j) store(&r.e[j], 0.0f);
        }
        *reinterpret_cast<P*>(out + out_ix.at(n, ch, y, x)) = r;
    }
}

}  // namespace

void launch_channel_shuffle(const TensorView& in, const TensorView& out, int groups,
                            cudaStream_t stream) {
    require_same_shape(in, out, "channel shuffle");
    require_same_storage(in, out, "channel shuffle");
    if (groups < 1 || out.c % groups != 0)
        throw Error(fmt::format("channel shuffle: {} channels do not split into {} groups", out.c,
                                groups));
    const int64_t total = out.elements();
    if (total == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        if (in.nhwc()) {
            channel_shuffle_nhwc_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, out.c, groups, total);
            return;
        }
        const int64_t plane = int64_t(out.h) * out.w;
        int width = vector_width<T>({in, out});
        while (plane % width != 0) width /= 2;
        with_width(width, [&](auto w) {
            constexpr int W = decltype(w)::value;
            channel_shuffle_nchw_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, out.c, plane / W, groups, total / W);
        });
    });
    check_launch("channel shuffle");
}

namespace {

// Calls launch(T{}, integral_constant<W>) for the views' element type T and W consecutive
// channels of one pixel per thread: the channels-last vector width, 1 in NCHW.
template <class F>
void with_pixel_packs(const TensorView& in, const TensorView& out, F&& launch) {
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        const int width = out.nhwc() ? vector_width<T>({in, out}) : 1;
        with_width(width, [&](auto w) { launch(t, w); });
    });
}

}  // namespace

void launch_resize(const TensorView& in, const TensorView& out, bool bilinear, bool align_corners,
                   cudaStream_t stream) {
    require_same_storage(in, out, "resize");
    if (in.n != out.n || in.c != out.c || in.h < 1 || in.w < 1)
        throw Error(fmt::format("resize: input {}x{}x{}x{} and output {}x{}x{}x{} differ in batch "
                                "or channels",
                                in.n, in.c, in.h, in.w, out.n, out.c, out.h, out.w));
    const int64_t total = out.elements();
    if (total == 0) return;
    with_pixel_packs(in, out, [&](auto t, auto w) {
        using T = decltype(t);
        constexpr int W = decltype(w)::value;
        resize_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
            static_cast<const T*>(in.data), indexer_of(in), static_cast<T*>(out.data),
            indexer_of(out), total / W, bilinear, align_corners);
    });
    check_launch("resize");
}

void launch_spatial_pad(const TensorView& in, const TensorView& out, int top, int bottom, int left,
                        int right, cudaStream_t stream) {
    require_same_storage(in, out, "spatial pad");
    if (in.n != out.n || in.c != out.c || int64_t(in.h) + top + bottom != out.h ||
        int64_t(in.w) + left + right != out.w)
        throw Error(fmt::format("spatial pad: input {}x{}x{}x{} padded by top {}, bottom {}, left "
                                "{}, right {} is not the output {}x{}x{}x{}",
                                in.n, in.c, in.h, in.w, top, bottom, left, right, out.n, out.c,
                                out.h, out.w));
    const int64_t total = out.elements();
    if (total == 0) return;
    with_pixel_packs(in, out, [&](auto t, auto w) {
        using T = decltype(t);
        constexpr int W = decltype(w)::value;
        spatial_pad_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
            static_cast<const T*>(in.data), indexer_of(in), static_cast<T*>(out.data),
            indexer_of(out), total / W, top, left);
    });
    check_launch("spatial pad");
}

}  // namespace iostune
