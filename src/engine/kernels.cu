#include "src/engine/kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>

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

Rows rows_of(const TensorView& v) { return Rows{v.row_elements(), v.row_stride}; }

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

// 16-byte accesses: 8 half/bfloat16 or 4 float elements per load and store, for views whose rows
// hold whole vectors (row length and stride multiples of the width, 16-byte aligned), as every
// packed tensor and channel slice with channel counts in multiples of 8 does.
template <class T>
constexpr int kVector = 16 / int(sizeof(T));

template <class T>
struct alignas(16) Vector {
    T e[kVector<T>];
};

template <class T>
bool vectorizable(const TensorView& v) {
    return v.row_elements() % kVector<T> == 0 && v.row_stride % kVector<T> == 0 &&
           reinterpret_cast<uintptr_t>(v.data) % 16 == 0;
}

// Rows counted in vectors.
template <class T>
Rows vector_rows_of(const TensorView& v) {
    return Rows{v.row_elements() / kVector<T>, v.row_stride / kVector<T>};
}

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
struct AddInputs {
    const T* data[kMaxAddInputs];
    Rows rows[kMaxAddInputs];
    int count;
};

template <class T>
__global__ void add_kernel(AddInputs<T> inputs, T* out, Rows out_rows, int64_t total,
                           bool accumulate, bool relu) {
    IOSTUNE_GRID_LOOP(i, total) {
        T* dst = out + out_rows.at(i);
        float acc = accumulate ? load(dst) : 0.0f;
        for (int k = 0; k < inputs.count; ++k) acc += load(inputs.data[k] + inputs.rows[k].at(i));
        store(dst, relu ? fmaxf(acc, 0.0f) : acc);
    }
}

template <class T>
__global__ void copy_kernel(const T* in, Rows in_rows, T* out, Rows out_rows, int64_t total,
                            bool relu) {
    IOSTUNE_GRID_LOOP(i, total) {
        const float v = load(in + in_rows.at(i));
        store(out + out_rows.at(i), relu ? fmaxf(v, 0.0f) : v);
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

template <class T>
__global__ void add_vector_kernel(AddInputs<T> inputs, T* out, Rows out_rows, int64_t total,
                                  bool accumulate, bool relu) {
    using V = Vector<T>;
    IOSTUNE_GRID_LOOP(i, total) {
        V* dst = reinterpret_cast<V*>(out) + out_rows.at(i);
        float acc[kVector<T>];
        const V first = *dst;
        for (int j = 0; j < kVector<T>; ++j) acc[j] = accumulate ? load(&first.e[j]) : 0.0f;
        for (int k = 0; k < inputs.count; ++k) {
            const V x = reinterpret_cast<const V*>(inputs.data[k])[inputs.rows[k].at(i)];
            for (int j = 0; j < kVector<T>; ++j) acc[j] += load(&x.e[j]);
        }
        V y;
        for (int j = 0; j < kVector<T>; ++j) store(&y.e[j], relu ? fmaxf(acc[j], 0.0f) : acc[j]);
        *dst = y;
    }
}

template <class T>
__global__ void copy_vector_kernel(const T* in, Rows in_rows, T* out, Rows out_rows, int64_t total,
                                   bool relu) {
    using V = Vector<T>;
    IOSTUNE_GRID_LOOP(i, total) {
        V x = reinterpret_cast<const V*>(in)[in_rows.at(i)];
        if (relu)
            for (int j = 0; j < kVector<T>; ++j) store(&x.e[j], fmaxf(load(&x.e[j]), 0.0f));
        reinterpret_cast<V*>(out)[out_rows.at(i)] = x;
    }
}

// Channels-last bias (+ReLU): a vector holds kVector consecutive channels of one pixel.
template <class T>
__global__ void bias_activation_nhwc_vector_kernel(T* x, Rows rows, int64_t total, int channels,
                                                   const T* bias, bool relu) {
    using V = Vector<T>;
    const int per_row = channels / kVector<T>;
    IOSTUNE_GRID_LOOP(i, total) {
        V* p = reinterpret_cast<V*>(x) + rows.at(i);
        V v = *p;
        const int first = int(i % per_row) * kVector<T>;
        for (int j = 0; j < kVector<T>; ++j) {
            float y = load(&v.e[j]);
            if (bias != nullptr) y += load(bias + first + j);
            store(&v.e[j], relu ? fmaxf(y, 0.0f) : y);
        }
        *p = v;
    }
}

// Channels-last pooling, one vector of channels per thread: every window read is 16 bytes wide
// and the warp's reads are consecutive.
template <class T>
__global__ void pool2d_nhwc_vector_kernel(const T* in, int64_t in_stride, T* out,
                                          int64_t out_stride, int64_t total, int channels,
                                          int in_h, int in_w, int out_h, int out_w, PoolWindow win) {
    using V = Vector<T>;
    const int per_pixel = channels / kVector<T>;
    IOSTUNE_GRID_LOOP(i, total) {
        const int cv = int(i % per_pixel);
        int64_t pixel = i / per_pixel;
        const int ow = int(pixel % out_w);
        pixel /= out_w;
        const int oh = int(pixel % out_h);
        const int64_t b = pixel / out_h;
        int h0 = oh * win.stride_h - win.pad_h;
        int w0 = ow * win.stride_w - win.pad_w;
        int h1 = min(h0 + win.kernel_h, in_h + win.pad_h);
        int w1 = min(w0 + win.kernel_w, in_w + win.pad_w);
        const int padded_size = (h1 - h0) * (w1 - w0);
        h0 = max(h0, 0);
        w0 = max(w0, 0);
        h1 = min(h1, in_h);
        w1 = min(w1, in_w);
        float acc[kVector<T>];
        for (int j = 0; j < kVector<T>; ++j) acc[j] = win.max ? -FLT_MAX : 0.0f;
        for (int y = h0; y < h1; ++y) {
            for (int x = w0; x < w1; ++x) {
                const V v = *reinterpret_cast<const V*>(
                    in + ((b * in_h + y) * in_w + x) * in_stride + int64_t(cv) * kVector<T>);
                for (int j = 0; j < kVector<T>; ++j)
                    acc[j] = win.max ? fmaxf(acc[j], load(&v.e[j])) : acc[j] + load(&v.e[j]);
            }
        }
        if (!win.max) {
            const int divisor = win.count_include_pad ? padded_size : (h1 - h0) * (w1 - w0);
            for (int j = 0; j < kVector<T>; ++j) acc[j] = divisor > 0 ? acc[j] / float(divisor) : 0.0f;
        }
        V r;
        for (int j = 0; j < kVector<T>; ++j) store(&r.e[j], acc[j]);
        *reinterpret_cast<V*>(out + ((b * out_h + oh) * out_w + ow) * out_stride +
                              int64_t(cv) * kVector<T>) = r;
    }
}

// One thread per (pixel, group of W channels) of the output; W = kVector<T> when the views hold
// whole vectors, else 1.
template <class T, int W>
__global__ void depthwise_nhwc_kernel(const T* in, int64_t in_stride, T* out, int64_t out_stride,
                                      const T* weight, const T* bias, int channels, int in_h,
                                      int in_w, int out_h, int out_w, DepthwiseGeometry g,
                                      int64_t total, bool relu_input, bool relu_output) {
    struct alignas(W * sizeof(T)) Pack {
        T e[W];
    };
    const int per_pixel = channels / W;
    IOSTUNE_GRID_LOOP(i, total) {
        const int cv = int(i % per_pixel);
        int64_t pixel = i / per_pixel;
        const int ox = int(pixel % out_w);
        pixel /= out_w;
        const int oy = int(pixel % out_h);
        const int64_t n = pixel / out_h;
        const int c0 = cv * W;
        float acc[W];
        for (int j = 0; j < W; ++j) acc[j] = bias != nullptr ? load(bias + c0 + j) : 0.0f;
        for (int ky = 0; ky < g.kernel_h; ++ky) {
            const int iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
            if (iy < 0 || iy >= in_h) continue;
            for (int kx = 0; kx < g.kernel_w; ++kx) {
                const int ix = ox * g.stride_w - g.pad_w + kx * g.dilation_w;
                if (ix < 0 || ix >= in_w) continue;
                const Pack x =
                    *reinterpret_cast<const Pack*>(in + ((n * in_h + iy) * in_w + ix) * in_stride + c0);
                const Pack w = *reinterpret_cast<const Pack*>(
                    weight + int64_t(ky * g.kernel_w + kx) * channels + c0);
                for (int j = 0; j < W; ++j) {
                    const float v = load(&x.e[j]);
                    acc[j] += (relu_input ? fmaxf(v, 0.0f) : v) * load(&w.e[j]);
                }
            }
        }
        Pack y;
        for (int j = 0; j < W; ++j) store(&y.e[j], relu_output ? fmaxf(acc[j], 0.0f) : acc[j]);
        *reinterpret_cast<Pack*>(out + ((n * out_h + oy) * out_w + ox) * out_stride + c0) = y;
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
        if (in.nhwc() && vectorizable<T>(in) && vectorizable<T>(out)) {
            const int64_t vectors = total / kVector<T>;
            pool2d_nhwc_vector_kernel<T><<<blocks_for(vectors), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, vectors, out.c, in.h, in.w, out.h, out.w, window);
            return;
        }
        pool2d_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
            static_cast<const T*>(in.data), indexer_of(in), static_cast<T*>(out.data),
            indexer_of(out), total, window);
    });
    check_launch("pool2d");
}

void launch_add(const std::vector<TensorView>& inputs, const TensorView& out, bool relu,
                cudaStream_t stream) {
    if (inputs.empty()) throw Error("add: no inputs");
    const int64_t total = out.elements();
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        bool vector = vectorizable<T>(out);
        for (const TensorView& v : inputs) vector = vector && vectorizable<T>(v);
        for (size_t first = 0; first < inputs.size(); first += kMaxAddInputs) {
            AddInputs<T> batch{};
            batch.count = int(std::min<size_t>(kMaxAddInputs, inputs.size() - first));
            for (int k = 0; k < batch.count; ++k) {
                const TensorView& v = inputs[first + size_t(k)];
                require_same_shape(v, out, "add");
                require_same_storage(v, out, "add");
                batch.data[k] = static_cast<const T*>(v.data);
                batch.rows[k] = vector ? vector_rows_of<T>(v) : rows_of(v);
            }
            const bool last = first + kMaxAddInputs >= inputs.size();
            if (vector) {
                const int64_t vectors = total / kVector<T>;
                add_vector_kernel<T><<<blocks_for(vectors), kThreads, 0, stream>>>(
                    batch, static_cast<T*>(out.data), vector_rows_of<T>(out), vectors, first > 0,
                    relu && last);
            } else {
                add_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
                    batch, static_cast<T*>(out.data), rows_of(out), total, first > 0, relu && last);
            }
            check_launch("add");
        }
    });
}

void launch_copy(const TensorView& in, const TensorView& out, bool relu, cudaStream_t stream) {
    require_same_shape(in, out, relu ? "relu" : "copy");
    require_same_storage(in, out, relu ? "relu" : "copy");
    const int64_t total = out.elements();
    if (total == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        if (vectorizable<T>(in) && vectorizable<T>(out)) {
            const int64_t vectors = total / kVector<T>;
            copy_vector_kernel<T><<<blocks_for(vectors), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), vector_rows_of<T>(in), static_cast<T*>(out.data),
                vector_rows_of<T>(out), vectors, relu);
            return;
        }
        copy_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
            static_cast<const T*>(in.data), rows_of(in), static_cast<T*>(out.data), rows_of(out),
            total, relu);
    });
    check_launch(relu ? "relu" : "copy");
}

void launch_bias_activation(const TensorView& x, const void* bias, bool relu, cudaStream_t stream) {
    const int64_t total = x.elements();
    if (total == 0 || (bias == nullptr && !relu)) return;
    dispatch(x.dtype, [&](auto t) {
        using T = decltype(t);
        if (x.nhwc() && vectorizable<T>(x)) {
            const int64_t vectors = total / kVector<T>;
            bias_activation_nhwc_vector_kernel<T><<<blocks_for(vectors), kThreads, 0, stream>>>(
                static_cast<T*>(x.data), vector_rows_of<T>(x), vectors, x.c,
                static_cast<const T*>(bias), relu);
            return;
        }
        bias_activation_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
            static_cast<T*>(x.data), indexer_of(x), total, static_cast<const T*>(bias), relu);
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
        const bool vector = vectorizable<T>(in) && vectorizable<T>(out) &&
                            reinterpret_cast<uintptr_t>(weight) % 16 == 0 &&
                            reinterpret_cast<uintptr_t>(bias) % 16 == 0;
        const auto* w = static_cast<const T*>(weight);
        const auto* b = static_cast<const T*>(bias);
        if (vector) {
            const int64_t threads = total / kVector<T>;
            depthwise_nhwc_kernel<T, kVector<T>><<<blocks_for(threads), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, w, b, out.c, in.h, in.w, out.h, out.w, g, threads, relu_input,
                relu_output);
        } else {
            depthwise_nhwc_kernel<T, 1><<<blocks_for(total), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), in.row_stride, static_cast<T*>(out.data),
                out.row_stride, w, b, out.c, in.h, in.w, out.h, out.w, g, total, relu_input,
                relu_output);
        }
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
