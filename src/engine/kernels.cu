#include "src/engine/kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "src/engine/cuda_check.h"

namespace iostune {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxAddInputs = 8;  // inputs per add kernel; more are summed in further passes

__device__ __forceinline__ float load(const float* p) { return *p; }
__device__ __forceinline__ float load(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// Where flat element `i` of a view lives, counting elements in storage order (row after row):
// rows are batch items (NCHW) or pixels (NHWC), see tensor_view.h.
struct Rows {
    int64_t elements = 0;  // per row
    int64_t stride = 0;    // between rows
    __device__ __forceinline__ int64_t at(int64_t i) const {
        return stride == elements ? i : (i / elements) * stride + i % elements;
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
        if (nhwc) {
            ch = int(i % c);
            i /= c;
            x = int(i % w);
            i /= w;
            y = int(i % h);
            n = i / h;
        } else {
            x = int(i % w);
            i /= w;
            y = int(i % h);
            i /= h;
            ch = int(i % c);
            n = i / c;
        }
    }
};

Indexer indexer_of(const TensorView& v) { return Indexer{v.row_stride, v.c, v.h, v.w, v.nhwc()}; }

unsigned blocks_for(int64_t count) {
    return unsigned(std::min<int64_t>((count + kThreads - 1) / kThreads, 65535LL * 16));
}

void check_launch(const char* kernel) {
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
__global__ void bias_activation_kernel(T* x, Indexer ix, int64_t total, const T* bias, bool relu) {
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t b = 0;
        int ch = 0, y = 0, xx = 0;
        ix.coordinates(i, b, ch, y, xx);
        T* p = x + ix.at(b, ch, y, xx);
        float v = load(p);
        if (bias != nullptr) v += load(bias + ch);
        store(p, relu ? fmaxf(v, 0.0f) : v);
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

// Vector accesses: W consecutive elements per load and store, W the widest of 8/4/2/1 (16 bytes
// at most) that divides every operand's row length and row stride, with the data aligned to it:
// 16-byte accesses for channel counts in multiples of 8 (half), narrower ones for the rest
// (RandWire's 78 channels: 4 bytes).
template <class T, int W>
struct alignas(W * sizeof(T)) Pack {
    T e[W];
};

template <class T>
int vector_width(std::initializer_list<TensorView> views,
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
Rows rows_of(const TensorView& v, int w) { return Rows{v.row_elements() / w, v.row_stride / w}; }

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

// Channels-last bias (+ReLU): a pack holds W consecutive channels of one pixel.
template <class T, int W>
__global__ void bias_activation_nhwc_kernel(T* x, Rows rows, int64_t total, int channels,
                                            const T* bias, bool relu) {
    using P = Pack<T, W>;
    const int per_row = channels / W;
    IOSTUNE_GRID_LOOP(i, total) {
        P* p = reinterpret_cast<P*>(x) + rows.at(i);
        P v = *p;
        const int first = int(i % per_row) * W;
        for (int j = 0; j < W; ++j) {
            float y = load(&v.e[j]);
            if (bias != nullptr) y += load(bias + first + j);
            store(&v.e[j], relu ? fmaxf(y, 0.0f) : y);
        }
        *p = v;
    }
}

// The output position of channels-last thread i, which handles W channels of one pixel.
struct PixelChannels {
    int64_t n;
    int y, x, c0;
    __device__ __forceinline__ PixelChannels(int64_t i, int per_pixel, int w, int out_h, int out_w) {
        c0 = int(i % per_pixel) * w;
        int64_t pixel = i / per_pixel;
        x = int(pixel % out_w);
        pixel /= out_w;
        y = int(pixel % out_h);
        n = pixel / out_h;
    }
};

// Channels-last pooling, W channels per thread: a warp's window reads are consecutive.
template <class T, int W>
__global__ void pool2d_nhwc_kernel(const T* in, int64_t in_stride, T* out, int64_t out_stride,
                                   int64_t total, int channels, int in_h, int in_w, int out_h,
                                   int out_w, PoolWindow win) {
    using P = Pack<T, W>;
    const int per_pixel = channels / W;
    IOSTUNE_GRID_LOOP(i, total) {
        const PixelChannels at(i, per_pixel, W, out_h, out_w);
        const int64_t b = at.n;
        const int oh = at.y, ow = at.x, c0 = at.c0;
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
        for (int y = h0; y < h1; ++y) {
            for (int x = w0; x < w1; ++x) {
                const P v =
                    *reinterpret_cast<const P*>(in + ((b * in_h + y) * in_w + x) * in_stride + c0);
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
        *reinterpret_cast<P*>(out + ((b * out_h + oh) * out_w + ow) * out_stride + c0) = r;
    }
}

// One thread per (output pixel, W channels).
template <class T, int W>
__global__ void depthwise_nhwc_kernel(const T* in, int64_t in_stride, T* out, int64_t out_stride,
                                      const T* weight, const T* bias, int channels, int in_h,
                                      int in_w, int out_h, int out_w, DepthwiseGeometry g,
                                      int64_t total, bool relu_input, bool relu_output) {
    using P = Pack<T, W>;
    const int per_pixel = channels / W;
    IOSTUNE_GRID_LOOP(i, total) {
        const PixelChannels at(i, per_pixel, W, out_h, out_w);
        const int64_t n = at.n;
        const int oy = at.y, ox = at.x, c0 = at.c0;
        float acc[W];
        for (int j = 0; j < W; ++j) acc[j] = bias != nullptr ? load(bias + c0 + j) : 0.0f;
        for (int ky = 0; ky < g.kernel_h; ++ky) {
            const int iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
            if (iy < 0 || iy >= in_h) continue;
            for (int kx = 0; kx < g.kernel_w; ++kx) {
                const int ix = ox * g.stride_w - g.pad_w + kx * g.dilation_w;
                if (ix < 0 || ix >= in_w) continue;
                const P x =
                    *reinterpret_cast<const P*>(in + ((n * in_h + iy) * in_w + ix) * in_stride + c0);
                const P w =
                    *reinterpret_cast<const P*>(weight + int64_t(ky * g.kernel_w + kx) * channels + c0);
                for (int j = 0; j < W; ++j) {
                    const float v = load(&x.e[j]);
                    acc[j] += (relu_input ? fmaxf(v, 0.0f) : v) * load(&w.e[j]);
                }
            }
        }
        P y;
        for (int j = 0; j < W; ++j) store(&y.e[j], relu_output ? fmaxf(acc[j], 0.0f) : acc[j]);
        *reinterpret_cast<P*>(out + ((n * out_h + oy) * out_w + ox) * out_stride + c0) = y;
    }
}

void require_same_shape(const TensorView& a, const TensorView& b, const char* what) {
    if (!a.same_shape(b)) {
        throw Error(fmt::format("{}: input {}x{}x{}x{} and output {}x{}x{}x{} differ", what, a.n,
                                a.c, a.h, a.w, b.n, b.c, b.h, b.w));
    }
}

// Same element type and layout: what every kernel but convert needs of its operands.
void require_same_storage(const TensorView& a, const TensorView& b, const char* what) {
    if (a.dtype != b.dtype || a.layout != b.layout) {
        throw Error(fmt::format("{}: operands are {} {} and {} {}; the kernel needs one type and "
                                "layout",
                                what, to_string(a.dtype), to_string(a.layout), to_string(b.dtype),
                                to_string(b.layout)));
    }
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
            pool2d_nhwc_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, total / W, out.c, in.h, in.w, out.h, out.w, window);
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

void launch_bias_activation(const TensorView& x, const void* bias, bool relu, cudaStream_t stream) {
    const int64_t total = x.elements();
    if (total == 0 || (bias == nullptr && !relu)) return;
    dispatch(x.dtype, [&](auto t) {
        using T = decltype(t);
        const auto* b = static_cast<const T*>(bias);
        if (!x.nhwc()) {
            bias_activation_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
                static_cast<T*>(x.data), indexer_of(x), total, b, relu);
            return;
        }
        with_width(vector_width<T>({x}), [&](auto width) {
            constexpr int W = decltype(width)::value;
            bias_activation_nhwc_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                static_cast<T*>(x.data), rows_of(x, W), total / W, x.c, b, relu);
        });
    });
    check_launch("bias_activation");
}

void launch_depthwise_nhwc(const TensorView& in, const TensorView& out, const void* weight,
                           const void* bias, const DepthwiseGeometry& g, bool relu_input,
                           bool relu_output, cudaStream_t stream) {
    require_same_storage(in, out, "depthwise");
    if (!in.nhwc() || in.c != out.c || in.n != out.n)
        throw Error(fmt::format("depthwise kernel: needs channels-last views of equal channels, "
                                "got {} {}x{}x{}x{} -> {}x{}x{}x{}",
                                to_string(in.layout), in.n, in.c, in.h, in.w, out.n, out.c, out.h,
                                out.w));
    const int64_t total = out.elements();
    if (total == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        with_width(vector_width<T>({in, out}, {weight, bias}), [&](auto width) {
            constexpr int W = decltype(width)::value;
            depthwise_nhwc_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, static_cast<const T*>(weight), static_cast<const T*>(bias), out.c,
                in.h, in.w, out.h, out.w, g, total / W, relu_input, relu_output);
        });
    });
    check_launch("depthwise");
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
