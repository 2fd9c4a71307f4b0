// The engine's direct transposed convolution: what runs a ConvTranspose when cuDNN has no
// backward-data algorithm for its type, layout and geometry (conv_transpose_step.h is the usual
// path). One thread per output element gathers the input pixels whose kernel taps land on it.
// See op_kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <cstdint>

#include "src/engine/kernel_support.cuh"
#include "src/engine/op_kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

template <class T>
__global__ void conv_transpose_kernel(const T* in, Indexer in_ix, T* out, Indexer out_ix,
                                      const T* weight, Indexer w_ix, const T* bias,
                                      ConvTransposeGeometry g, int64_t total) {
    const int in_per_group = in_ix.c / g.groups;
    const int out_per_group = out_ix.c / g.groups;
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t n = 0;
        int oc = 0, oy = 0, ox = 0;
        out_ix.coordinates(i, n, oc, oy, ox);
        const int group = oc / out_per_group, local = oc % out_per_group;
        float acc = bias != nullptr ? load(bias + oc) : 0.0f;
        for (int ky = 0; ky < g.kernel_h; ++ky) {
            const int ty = oy + g.pad_h - ky * g.dilation_h;
            if (ty < 0 || ty % g.stride_h != 0 || ty / g.stride_h >= in_ix.h) continue;
            const int iy = ty / g.stride_h;
            for (int kx = 0; kx < g.kernel_w; ++kx) {
                const int tx = ox + g.pad_w - kx * g.dilation_w;
                if (tx < 0 || tx % g.stride_w != 0 || tx / g.stride_w >= in_ix.w) continue;
                const int ix = tx / g.stride_w;
                for (int k = 0; k < in_per_group; ++k) {
                    const int ic = group * in_per_group + k;
                    acc += load(in + in_ix.at(n, ic, iy, ix)) *
                           load(weight + w_ix.at(ic, local, ky, kx));
                }
            }
        }
        store(out + out_ix.at(n, oc, oy, ox), acc);
    }
}

}  // namespace

void launch_conv_transpose(const TensorView& in, const TensorView& out, const void* weight,
                           const void* bias, const ConvTransposeGeometry& g, cudaStream_t stream) {
    require_same_storage(in, out, "conv transpose");
    if (in.n != out.n || g.groups < 1 || in.c % g.groups != 0 || out.c % g.groups != 0 ||
        g.stride_h < 1 || g.stride_w < 1)
        throw Error(fmt::format("conv transpose kernel: {}x{}x{}x{} -> {}x{}x{}x{} in {} groups "
                                "with strides {}x{}",
                                in.n, in.c, in.h, in.w, out.n, out.c, out.h, out.w, g.groups,
                                g.stride_h, g.stride_w));
    const int64_t total = out.elements();
    if (total == 0) return;
    // The filter [Cin, Cout/groups, kh, kw], packed in the views' layout.
    const TensorView filter = packed_view(const_cast<void*>(weight), out.dtype, out.layout, in.c,
                                          out.c / g.groups, g.kernel_h, g.kernel_w);
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        conv_transpose_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
            static_cast<const T*>(in.data), indexer_of(in), static_cast<T*>(out.data),
            indexer_of(out), static_cast<const T*>(weight), indexer_of(filter),
            static_cast<const T*>(bias), g, total);
    });
    check_launch("conv transpose");
}

}  // namespace iostune
