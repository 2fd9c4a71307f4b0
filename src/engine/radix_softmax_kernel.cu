// Split attention's softmax across branches (ResNeSt's rSoftMax, SKNet's softmax over paths). One
// thread per (image, cardinal group, channel of a branch, pixel) reads its `radix` branches,
// which lie r channels apart, and writes their weights. Threads walk that reduced tensor in the
// views' storage order, so neighbouring threads touch neighbouring pixels (NCHW) or channels
// (NHWC). See op_kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <cfloat>
#include <cstdint>

#include "src/engine/kernel_support.cuh"
#include "src/engine/op_kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

constexpr int kMaxRadix = 16;  // branches held in registers; more take a second pass each

template <class T>
__global__ void radix_softmax_kernel(const T* in, Indexer in_ix, T* out, Indexer out_ix,
                                     Indexer reduced, int radix, int cardinality, int r,
                                     int64_t total) {
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t n = 0;
        int cr = 0, y = 0, x = 0;  // cr = g * r + j: cardinal group g, channel j of a branch
        reduced.coordinates(i, n, cr, y, x);
        const int g = cr / r, j = cr - g * r;
        const auto source = [&](int k) {
            return load(in + in_ix.at(n, (g * radix + k) * r + j, y, x));
        };
        float e[kMaxRadix];
        float top = -FLT_MAX;
        for (int k = 0; k < radix; ++k) {
            const float v = source(k);
            if (k < kMaxRadix) e[k] = v;
            top = fmaxf(top, v);
        }
        float sum = 0.0f;
        for (int k = 0; k < radix; ++k) {
            const float v = expf((k < kMaxRadix ? e[k] : source(k)) - top);
            if (k < kMaxRadix) e[k] = v;
            sum += v;
        }
        for (int k = 0; k < radix; ++k) {
            const float v = k < kMaxRadix ? e[k] : expf(source(k) - top);
            store(out + out_ix.at(n, (k * cardinality + g) * r + j, y, x), v / sum);
        }
    }
}

}  // namespace

void launch_radix_softmax(const TensorView& in, const TensorView& out, int radix,
                          int cardinality, cudaStream_t stream) {
    require_same_shape(in, out, "radix softmax");
    require_same_storage(in, out, "radix softmax");
    if (radix < 1 || cardinality < 1 || out.c % (int64_t(radix) * cardinality) != 0)
        throw Error(fmt::format("radix softmax: {} channels do not split into cardinality {} x "
                                "radix {} groups",
                                out.c, cardinality, radix));
    const int r = out.c / (radix * cardinality);
    // The tensor of softmax rows: [N, cardinality * r, H, W] in the views' layout.
    Indexer reduced = indexer_of(out);
    reduced.c = cardinality * r;
    const int64_t total = int64_t(out.n) * reduced.c * out.h * out.w;
    if (total == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        radix_softmax_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
            static_cast<const T*>(in.data), indexer_of(in), static_cast<T*>(out.data),
            indexer_of(out), reduced, radix, cardinality, r, total);
    });
    check_launch("radix softmax");
}

}  // namespace iostune
