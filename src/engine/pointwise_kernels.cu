// Pointwise kernels of deployed CNNs: activations (a row walk like the copy kernel) and the
// broadcasting kernel behind binary arithmetic, per-channel affine maps and PReLU. See
// op_kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "src/engine/activation.cuh"
#include "src/engine/kernel_support.cuh"
#include "src/engine/op_kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

template <class T, int W>
__global__ void activation_kernel(const T* in, Rows in_rows, T* out, Rows out_rows, int64_t total,
                                  PointwiseFunction f, float alpha, float beta) {
    using P = Pack<T, W>;
    IOSTUNE_GRID_LOOP(i, total) {
        P x = reinterpret_cast<const P*>(in)[in_rows.at(i)];
        for (int j = 0; j < W; ++j) store(&x.e[j], activate(f, alpha, beta, load(&x.e[j])));
        reinterpret_cast<P*>(out)[out_rows.at(i)] = x;
    }
}

// One operand of the broadcasting kernel: element strides along n, c, y, x, zero along an axis
// it broadcasts over. `inner_broadcast`: zero stride along the innermost storage axis (c in NHWC,
// x in NCHW), so one element serves a whole pack.
template <class T>
struct Operand {
    const T* data = nullptr;
    int64_t n = 0, c = 0, y = 0, x = 0;
    bool inner_broadcast = false;
};

// The output's logical extent and strides; a pack covers W consecutive elements of the innermost
// storage axis.
struct OutputGeometry {
    int c = 0, h = 0, w = 0;
    bool nhwc = false;
    int64_t sn = 0, sc = 0, sy = 0, sx = 0;
};

template <int N>
struct CombineInputs {
    float v[N];
};

struct BinaryCombine {
    BinaryKind op;
    __device__ __forceinline__ float operator()(const CombineInputs<2>& in) const {
        switch (op) {
            case BinaryKind::Add: return in.v[0] + in.v[1];
            case BinaryKind::Sub: return in.v[0] - in.v[1];
            case BinaryKind::Mul: return in.v[0] * in.v[1];
            case BinaryKind::Div: return in.v[0] / in.v[1];
        }
        return in.v[0];
    }
};

struct AffineCombine {  // x * scale + shift
    __device__ __forceinline__ float operator()(const CombineInputs<3>& in) const {
        return in.v[0] * in.v[1] + in.v[2];
    }
};

struct PReluCombine {  // x >= 0 ? x : slope * x
    __device__ __forceinline__ float operator()(const CombineInputs<2>& in) const {
        return prelu(in.v[0], in.v[1]);
    }
};

template <class T, int N>
struct Operands {
    Operand<T> op[N];
};

template <class T, int W, int N, class Combine>
__global__ void broadcast_kernel(Operands<T, N> inputs, T* out, OutputGeometry g, int64_t total,
                                 Combine combine) {
    using P = Pack<T, W>;
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t rest = i, r = 0;
        int ch = 0, y = 0, x = 0;
        if (g.nhwc) {
            rest = index_div(rest, g.c / W, r), ch = int(r) * W;
            rest = index_div(rest, g.w, r), x = int(r);
            rest = index_div(rest, g.h, r), y = int(r);
        } else {
            rest = index_div(rest, g.w / W, r), x = int(r) * W;
            rest = index_div(rest, g.h, r), y = int(r);
            rest = index_div(rest, g.c, r), ch = int(r);
        }
        const int64_t n = rest;
        CombineInputs<N> values[W];
        for (int k = 0; k < N; ++k) {
            const Operand<T>& o = inputs.op[k];
            const T* p = o.data + n * o.n + ch * o.c + y * o.y + x * o.x;
            if (o.inner_broadcast) {
                const float v = load(p);
                for (int j = 0; j < W; ++j) values[j].v[k] = v;
            } else {
                const P pack = *reinterpret_cast<const P*>(p);
                for (int j = 0; j < W; ++j) values[j].v[k] = load(&pack.e[j]);
            }
        }
        P result;
        for (int j = 0; j < W; ++j) store(&result.e[j], combine(values[j]));
        *reinterpret_cast<P*>(out + n * g.sn + ch * g.sc + y * g.sy + x * g.sx) = result;
    }
}

// Strides of view `v` read at the coordinates of `out` (zero along axes where v has extent 1).
template <class T>
Operand<T> operand_of(const TensorView& v, const TensorView& out) {
    Operand<T> o;
    o.data = static_cast<const T*>(v.data);
    const int64_t rs = v.row_stride;
    o.n = v.n == 1 ? 0 : v.batch_stride();
    o.c = v.c == 1 ? 0 : (v.nhwc() ? 1 : int64_t(v.h) * v.w);
    o.y = v.h == 1 ? 0 : (v.nhwc() ? int64_t(v.w) * rs : int64_t(v.w));
    o.x = v.w == 1 ? 0 : (v.nhwc() ? rs : 1);
    o.inner_broadcast = (out.nhwc() ? v.c : v.w) == 1 && (out.nhwc() ? out.c : out.w) > 1;
    return o;
}

// A [1, c, 1, 1] parameter vector (one element per channel) read at the coordinates of `out`.
template <class T>
Operand<T> channel_vector(const void* data, const TensorView& out) {
    Operand<T> o;
    o.data = static_cast<const T*>(data);
    o.c = 1;
    o.inner_broadcast = !out.nhwc() && out.w > 1;
    return o;
}

OutputGeometry geometry_of(const TensorView& out) {
    const int64_t rs = out.row_stride;
    OutputGeometry g{out.c, out.h, out.w, out.nhwc()};
    g.sn = out.batch_stride();
    g.sc = out.nhwc() ? 1 : int64_t(out.h) * out.w;
    g.sy = out.nhwc() ? int64_t(out.w) * rs : int64_t(out.w);
    g.sx = out.nhwc() ? rs : 1;
    return g;
}

// The widest pack (16 bytes at most) that divides the output's innermost axis and keeps every
// packed access aligned: each operand read by packs needs its pointer and its strides along the
// other axes to be multiples of the pack.
template <class T, int N>
int broadcast_width(const Operands<T, N>& inputs, const TensorView& out) {
    const OutputGeometry g = geometry_of(out);
    const int inner = out.nhwc() ? out.c : out.w;
    for (int w = 16 / int(sizeof(T)); w > 1; w /= 2) {
        const auto aligned = [&](const void* p, std::initializer_list<int64_t> strides) {
            bool ok = reinterpret_cast<uintptr_t>(p) % (size_t(w) * sizeof(T)) == 0;
            for (int64_t s : strides) ok = ok && s % w == 0;
            return ok;
        };
        bool fits = inner % w == 0 && aligned(out.data, {g.sn, out.nhwc() ? g.sy : g.sc,
                                                         out.nhwc() ? g.sx : g.sy});
        for (const Operand<T>& o : inputs.op)
            if (!o.inner_broadcast)
                fits = fits && aligned(o.data, {o.n, out.nhwc() ? o.y : o.c, out.nhwc() ? o.x : o.y});
        if (fits) return w;
    }
    return 1;
}

template <class T, int N, class Combine>
void launch_broadcast(const Operands<T, N>& inputs, const TensorView& out, Combine combine,
                      cudaStream_t stream) {
    const int64_t total = out.elements();
    if (total == 0) return;
    with_width(broadcast_width(inputs, out), [&](auto width) {
        constexpr int W = decltype(width)::value;
        broadcast_kernel<T, W, N, Combine><<<blocks_for(total / W), kThreads, 0, stream>>>(
            inputs, static_cast<T*>(out.data), geometry_of(out), total / W, combine);
    });
}

}  // namespace

void launch_activation(const TensorView& in, const TensorView& out, PointwiseFunction f,
                       float alpha, float beta, cudaStream_t stream) {
    require_same_shape(in, out, "activation");
    require_same_storage(in, out, "activation");
    const int64_t total = out.elements();
    if (total == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        with_width(vector_width<T>({in, out}), [&](auto width) {
            constexpr int W = decltype(width)::value;
            activation_kernel<T, W><<<blocks_for(total / W), kThreads, 0, stream>>>(
                static_cast<const T*>(in.data), rows_of(in, W), static_cast<T*>(out.data),
                rows_of(out, W), total / W, f, alpha, beta);
        });
    });
    check_launch("activation");
}

void launch_binary(const TensorView& a, const TensorView& b, const TensorView& out, BinaryKind op,
                   cudaStream_t stream) {
    require_same_storage(a, out, "binary");
    require_same_storage(b, out, "binary");
    for (const TensorView* v : {&a, &b}) {
        const auto fits = [](int extent, int target) { return extent == target || extent == 1; };
        if (v->n != out.n || !fits(v->c, out.c) || !fits(v->h, out.h) || !fits(v->w, out.w))
            throw Error(fmt::format("binary: operand {}x{}x{}x{} does not broadcast to the output "
                                    "{}x{}x{}x{}",
                                    v->n, v->c, v->h, v->w, out.n, out.c, out.h, out.w));
    }
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        const Operands<T, 2> inputs{{operand_of<T>(a, out), operand_of<T>(b, out)}};
        launch_broadcast(inputs, out, BinaryCombine{op}, stream);
    });
    check_launch("binary");
}

void launch_prelu(const TensorView& in, const TensorView& out, const void* slope,
                  cudaStream_t stream) {
    require_same_shape(in, out, "prelu");
    require_same_storage(in, out, "prelu");
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        const Operands<T, 2> inputs{{operand_of<T>(in, out), channel_vector<T>(slope, out)}};
        launch_broadcast(inputs, out, PReluCombine{}, stream);
    });
    check_launch("prelu");
}

void launch_channel_affine(const TensorView& in, const TensorView& out, const void* scale,
                           const void* shift, cudaStream_t stream) {
    require_same_shape(in, out, "channel affine");
    require_same_storage(in, out, "channel affine");
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        const Operands<T, 3> inputs{
            {operand_of<T>(in, out), channel_vector<T>(scale, out), channel_vector<T>(shift, out)}};
        launch_broadcast(inputs, out, AffineCombine{}, stream);
    });
    check_launch("channel affine");
}

}  // namespace iostune
