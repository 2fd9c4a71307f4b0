#include "src/engine/kernels.h"

#include <algorithm>
#include <cfloat>

#include "src/engine/activation.cuh"
#include "src/engine/kernel_support.cuh"

namespace iostune {
namespace {

using namespace kernel_support;

constexpr int kMaxAddInputs = 8;  // inputs per add kernel; more are summed in further passes

template <class T>
__global__ void pool2d_kernel(const T* in, Indexer in_ix, T* out, Indexer out_ix, int64_t total,
                              PoolWindow win) {
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t b = 0;
        int ch = 0, oh = 0, ow = 0;
        out_ix.coordinates(i, b, ch, oh, ow);
        int h0 = oh * win.stride_h - win.pad_h;
        int w0 = ow * win.stride_w - win.pad_w;
        int h1 = min(h0 + win.kernel_h, in_ix.h + win.pad_h);
        int w1 = min(w0 + win.kernel_w, in_ix.w + win.pad_w);
        const int padded_size = (h1 - h0) * (w1 - w0);
        h0 = max(h0, 0);
        w0 = max(w0, 0);
        h1 = min(h1, in_ix.h);
        w1 = min(w1, in_ix.w);
        float acc = win.max ? -FLT_MAX : 0.0f;
        for (int y = h0; y < h1; ++y) {
            for (int x = w0; x < w1; ++x) {
                const float v = load(in + in_ix.at(b, ch, y, x));
                acc = win.max ? fmaxf(acc, v) : acc + v;
            }
        }
        if (!win.max) {
            const int divisor = win.count_include_pad ? padded_size : (h1 - h0) * (w1 - w0);
            acc = divisor > 0 ? acc / float(divisor) : 0.0f;
        }
        store(out + out_ix.at(b, ch, oh, ow), acc);
    }
}

template <class T>
__global__ void bias_activation_kernel(T* x, Indexer ix, int64_t total, const T* bias,
                                       OutputActivation act) {
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t b = 0;
        int ch = 0, y = 0, xx = 0;
        ix.coordinates(i, b, ch, y, xx);
        T* p = x + ix.at(b, ch, y, xx);
        float v = load(p);
        if (bias != nullptr) v += load(bias + ch);
        store(p, activate<T>(act, v, ch));
    }
}

// A contiguous tensor as flat packs of W elements, for channel counts the per-pixel packs of the
// kernel below cannot take (RandWire's 77-channel stem ran element by element at twice its
// memory time, TF32 b16 H100). Channels-last (plane 1): the channel steps by one per element,
// wrapping at `channels`. NCHW: a pack lies in one channel's plane (plane % W == 0).
template <class T, int W>
__global__ void bias_activation_flat_kernel(T* x, int64_t packs, int plane, int channels,
                                            const T* bias, OutputActivation act) {
    using P = Pack<T, W>;
    IOSTUNE_GRID_LOOP(i, packs) {
        P* p = reinterpret_cast<P*>(x) + i;
        P v = *p;
        int64_t unused = 0, ch = 0;
        index_div(index_div(i * W, plane, unused), channels, ch);  // (first element / plane) % c
        for (int j = 0; j < W; ++j) {
            float y = load(&v.e[j]);
            if (bias != nullptr) y += load(bias + ch);
            store(&v.e[j], activate<T>(act, y, int(ch)));
            if (plane == 1 && ++ch == channels) ch = 0;
        }
        *p = v;
    }
}

template <class S, class D>
__global__ void convert_kernel(const S* src, Indexer src_ix, D* dst, Indexer dst_ix, int64_t total) {
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t b = 0;
        int ch = 0, y = 0, x = 0;
        dst_ix.coordinates(i, b, ch, y, x);
        store(dst + dst_ix.at(b, ch, y, x), load(src + src_ix.at(b, ch, y, x)));
    }
}

template <class T>
struct AddInputs {
    const T* data[kMaxAddInputs];
    Rows rows[kMaxAddInputs];  // in packs
    int count;
};

template <class T, int W>
__global__ void add_kernel(AddInputs<T> inputs, T* out, Rows out_rows, int64_t total,
                           bool accumulate, bool relu) {
    using P = Pack<T, W>;
    IOSTUNE_GRID_LOOP(i, total) {
        P* dst = reinterpret_cast<P*>(out) + out_rows.at(i);
        float acc[W];
        if (accumulate) {
            const P first = *dst;
            for (int j = 0; j < W; ++j) acc[j] = load(&first.e[j]);
        } else {
            for (int j = 0; j < W; ++j) acc[j] = 0.0f;
        }
        for (int k = 0; k < inputs.count; ++k) {
            const P x = reinterpret_cast<const P*>(inputs.data[k])[inputs.rows[k].at(i)];
            for (int j = 0; j < W; ++j) acc[j] += load(&x.e[j]);
        }
        P y;
        for (int j = 0; j < W; ++j) store(&y.e[j], relu ? fmaxf(acc[j], 0.0f) : acc[j]);
        *dst = y;
    }
}

template <class T, int W>
__global__ void copy_kernel(const T* in, Rows in_rows, T* out, Rows out_rows, int64_t total,
                            bool relu) {
    using P = Pack<T, W>;
    IOSTUNE_GRID_LOOP(i, total) {
        P x = reinterpret_cast<const P*>(in)[in_rows.at(i)];
        if (relu)
            for (int j = 0; j < W; ++j) store(&x.e[j], fmaxf(load(&x.e[j]), 0.0f));
        reinterpret_cast<P*>(out)[out_rows.at(i)] = x;
    }
}

// Channels-last bias and activation: a pack holds W consecutive channels of one pixel.
template <class T, int W>
__global__ void bias_activation_nhwc_kernel(T* x, Rows rows, int64_t total, int channels,
                                            const T* bias, OutputActivation act) {
    using P = Pack<T, W>;
    const int per_row = channels / W;
    IOSTUNE_GRID_LOOP(i, total) {
        P* p = reinterpret_cast<P*>(x) + rows.at(i);
        P v = *p;
        int64_t pack = 0;
        index_div(i, per_row, pack);
        const int first = int(pack) * W;
        for (int j = 0; j < W; ++j) {
            float y = load(&v.e[j]);
            if (bias != nullptr) y += load(bias + first + j);
            store(&v.e[j], activate<T>(act, y, first + j));
        }
        *p = v;
    }
}

// Channels-last pooling, a thread per (output pixel, W channels) in RowLaunch's grid: a warp's
// window reads are consecutive channels.
template <class T, int W>
__global__ void pool2d_nhwc_kernel(const T* __restrict__ in, int in_stride, T* __restrict__ out,
                                   int out_stride, int channels, int in_h, int in_w, int out_h,
                                   int out_w, PoolWindow win) {
    using P = Pack<T, W>;
    const int packs = channels / W;
    const int t = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
    if (t >= packs * out_w) return;
    const int ow = t / packs;
    const int c0 = (t - ow * packs) * W;
    const int oh = int(blockIdx.y);
    const int64_t b = blockIdx.z;
    int h0 = oh * win.stride_h - win.pad_h;
    int w0 = ow * win.stride_w - win.pad_w;
    int h1 = min(h0 + win.kernel_h, in_h + win.pad_h);
    int w1 = min(w0 + win.kernel_w, in_w + win.pad_w);
    const int padded_size = (h1 - h0) * (w1 - w0);
    h0 = max(h0, 0);
    w0 = max(w0, 0);
    h1 = min(h1, in_h);
    w1 = min(w1, in_w);
    float acc[W];
    for (int j = 0; j < W; ++j) acc[j] = win.max ? -FLT_MAX : 0.0f;
    const T* image = in + b * in_h * in_w * int64_t(in_stride) + c0;
    for (int y = h0; y < h1; ++y) {
        const T* row = image + int64_t(y) * in_w * in_stride;
        for (int x = w0; x < w1; ++x) {
            const P v = *reinterpret_cast<const P*>(row + x * in_stride);
            for (int j = 0; j < W; ++j)
                acc[j] = win.max ? fmaxf(acc[j], load(&v.e[j])) : acc[j] + load(&v.e[j]);
        }
    }
    if (!win.max) {
        const int divisor = win.count_include_pad ? padded_size : (h1 - h0) * (w1 - w0);
        for (int j = 0; j < W; ++j) acc[j] = divisor > 0 ? acc[j] / float(divisor) : 0.0f;
    }
    P r;
    for (int j = 0; j < W; ++j) store(&r.e[j], acc[j]);
    *reinterpret_cast<P*>(out + ((b * out_h + oh) * out_w + ow) * int64_t(out_stride) + c0) = r;
}

// Global pooling of channels-last rows. The windowed kernel above gives a global pool one
// thread per channel pack, each reading every pixel in turn: four threads summing 12544 pixels
// for EfficientNet-B0's first squeeze-and-excitation in fp16 at batch 1. Here a block covers one
// sample's group of `lanes` consecutive packs (coalesced) by `slices` pixel slices; each thread
// reduces its slice, and the slices meet in shared memory.
constexpr int kGlobalPoolThreads = 1024;

template <class T, int W>
__global__ void __launch_bounds__(kGlobalPoolThreads)
    global_pool_nhwc_kernel(const T* __restrict__ in, int in_stride, T* __restrict__ out,
                            int out_stride, int packs, int pixels, bool max) {
    using P = Pack<T, W>;
    __shared__ float partial[kGlobalPoolThreads][W];
    const int lanes = int(blockDim.x), slices = int(blockDim.y);
    const int pack = int(blockIdx.x) * lanes + int(threadIdx.x);
    const int64_t n = blockIdx.y;
    float acc[W];
    for (int j = 0; j < W; ++j) acc[j] = max ? -FLT_MAX : 0.0f;
    if (pack < packs) {
        const T* image = in + n * pixels * int64_t(in_stride) + pack * W;
        for (int p = int(threadIdx.y); p < pixels; p += slices) {
            const P v = *reinterpret_cast<const P*>(image + int64_t(p) * in_stride);
            for (int j = 0; j < W; ++j)
                acc[j] = max ? fmaxf(acc[j], load(&v.e[j])) : acc[j] + load(&v.e[j]);
        }
    }
    const int me = int(threadIdx.y) * lanes + int(threadIdx.x);
    for (int j = 0; j < W; ++j) partial[me][j] = acc[j];
    __syncthreads();
    for (int half = slices / 2; half > 0; half /= 2) {  // slices is a power of two
        if (int(threadIdx.y) < half) {
            const int other = me + half * lanes;
            for (int j = 0; j < W; ++j)
                partial[me][j] = max ? fmaxf(partial[me][j], partial[other][j])
                                     : partial[me][j] + partial[other][j];
        }
        __syncthreads();
    }
    if (threadIdx.y == 0 && pack < packs) {
        P r;
        for (int j = 0; j < W; ++j)
            store(&r.e[j], max ? partial[me][j] : partial[me][j] / float(pixels));
        *reinterpret_cast<P*>(out + n * int64_t(out_stride) + pack * W) = r;
    }
}

// The smallest power of two at least `v` (v >= 1).
int ceil_pow2(int v) {
    int p = 1;
    while (p < v) p *= 2;
    return p;
}

// A window covering the whole unpadded input, one output pixel.
bool is_global(const TensorView& in, const TensorView& out, const PoolWindow& w) {
    return out.h == 1 && out.w == 1 && w.kernel_h == in.h && w.kernel_w == in.w &&
           w.pad_h == 0 && w.pad_w == 0;
}

template <class T, int W>
void launch_global_pool_nhwc(const TensorView& in, const TensorView& out, bool max,
                             cudaStream_t stream) {
    const int packs = out.c / W;
    const int pixels = in.h * in.w;
    if (out.n > 65535 || int64_t(pixels) * in.row_stride > INT32_MAX)
        throw Error(fmt::format("{}x{}x{}x{} is beyond the global pooling kernel's grid", in.n,
                                in.c, in.h, in.w));
    // Lanes: consecutive packs covering 128 bytes (a cache line per pixel read); slices: enough
    // for about four pixels a thread. A warp of lanes had put a classifier's last pool at batch
    // 1 in few blocks: NASNet-A's 4032x11x11 in fp16 in 16 blocks of 1024 threads, 7.2 us
    // against 4.1 in fp32 (32 blocks); with 8 lanes of 16-byte packs, 63 blocks of 256.
    const int line_lanes = std::max(1, 128 / int(W * sizeof(T)));
    const int lanes = std::min(line_lanes, ceil_pow2(packs));
    const int slices = std::min(kGlobalPoolThreads / lanes, ceil_pow2((pixels + 3) / 4));
    const dim3 block{unsigned(lanes), unsigned(slices)};
    const dim3 grid{unsigned((packs + lanes - 1) / lanes), unsigned(out.n)};
    global_pool_nhwc_kernel<T, W><<<grid, block, 0, stream>>>(
        static_cast<const T*>(in.data), int(in.row_stride), static_cast<T*>(out.data),
        int(out.row_stride), packs, pixels, max);
}

}  // namespace

void launch_pool2d(const TensorView& in, const TensorView& out, const PoolWindow& window,
                   cudaStream_t stream) {
    require_same_storage(in, out, "pool2d");
    const int64_t total = out.elements();
    if (total == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        if (!in.nhwc()) {
            pool2d_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), indexer_of(in), static_cast<T*>(out.data),
                indexer_of(out), total, window);
            return;
        }
        with_width(vector_width<T>({in, out}), [&](auto width) {
            constexpr int W = decltype(width)::value;
            if (is_global(in, out, window)) {
                launch_global_pool_nhwc<T, W>(in, out, window.max, stream);
                return;
            }
            const RowLaunch shape(in, out, W, 1);
            pool2d_nhwc_kernel<T, W><<<shape.grid, shape.threads, 0, stream>>>(
                static_cast<const T*>(in.data), int(in.row_stride), static_cast<T*>(out.data),
                int(out.row_stride), out.c, in.h, in.w, out.h, out.w, window);
        });
    });
    check_launch("pool2d");
}

void launch_add(const std::vector<TensorView>& inputs, const TensorView& out, bool relu,
                cudaStream_t stream) {
    if (inputs.empty()) throw Error("add: no inputs");
    for (const TensorView& v : inputs) {
        require_same_shape(v, out, "add");
        require_same_storage(v, out, "add");
    }
    const int64_t total = out.elements();
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        int width = vector_width<T>({out});
        for (const TensorView& v : inputs) width = std::min(width, vector_width<T>({v}));
        with_width(width, [&](auto w) {
            constexpr int W = decltype(w)::value;
            for (size_t first = 0; first < inputs.size(); first += kMaxAddInputs) {
                AddInputs<T> batch{};
                batch.count = int(std::min<size_t>(kMaxAddInputs, inputs.size() - first));
                for (int k = 0; k < batch.count; ++k) {
                    batch.data[k] = static_cast<const T*>(inputs[first + size_t(k)].data);
                    batch.rows[k] = rows_of(inputs[first + size_t(k)], W);
                }
                const bool last = first + kMaxAddInputs >= inputs.size();
                add_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                    batch, static_cast<T*>(out.data), rows_of(out, W), total / W, first > 0,
                    relu && last);
                check_launch("add");
            }
        });
    });
}

void launch_copy(const TensorView& in, const TensorView& out, bool relu, cudaStream_t stream) {
    require_same_shape(in, out, relu ? "relu" : "copy");
    require_same_storage(in, out, relu ? "relu" : "copy");
    const int64_t total = out.elements();
    if (total == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        with_width(vector_width<T>({in, out}), [&](auto width) {
            constexpr int W = decltype(width)::value;
            copy_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), rows_of(in, W), static_cast<T*>(out.data),
                rows_of(out, W), total / W, relu);
        });
    });
    check_launch(relu ? "relu" : "copy");
}

void launch_bias_activation(const TensorView& x, const void* bias, const OutputActivation& act,
                            cudaStream_t stream) {
    const int64_t total = x.elements();
    if (total == 0 || (bias == nullptr && act.kind == OutputActivation::Kind::None)) return;
    dispatch(x.dtype, [&](auto t) {
        using T = decltype(t);
        const auto* b = static_cast<const T*>(bias);
        auto* data = static_cast<T*>(x.data);
        const int plane = x.nhwc() ? 1 : x.h * x.w;
        const int per_pixel = x.nhwc() ? vector_width<T>({x}) : 1;
        int flat = 1;  // the widest pack over a packed tensor's flat elements
        for (int w = 16 / int(sizeof(T)); w > 1 && flat == 1 && x.packed(); w /= 2)
            if (total % w == 0 && plane % w == 0 && byte_alignment(x.data, 16) >= w * sizeof(T))
                flat = w;
        if (flat > per_pixel) {
            with_width(flat, [&](auto width) {
                constexpr int W = decltype(width)::value;
                bias_activation_flat_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                    data, total / W, plane, x.c, b, act);
            });
        } else if (!x.nhwc()) {
            bias_activation_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
                data, indexer_of(x), total, b, act);
        } else {
            with_width(per_pixel, [&](auto width) {
                constexpr int W = decltype(width)::value;
                bias_activation_nhwc_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                    data, rows_of(x, W), total / W, x.c, b, act);
            });
        }
    });
    check_launch("bias_activation");
}

void launch_convert(const TensorView& src, const TensorView& dst, cudaStream_t stream) {
    require_same_shape(src, dst, "convert");
    const int64_t total = dst.elements();
    if (total == 0) return;
    dispatch(src.dtype, [&](auto s) {
        dispatch(dst.dtype, [&](auto d) {
            using S = decltype(s);
            using D = decltype(d);
            convert_kernel<S, D><<<blocks_for(total), kThreads, 0, stream>>>(
                static_cast<const S*>(src.data), indexer_of(src), static_cast<D*>(dst.data),
                indexer_of(dst), total);
        });
    });
    check_launch("convert");
}

}  // namespace iostune
