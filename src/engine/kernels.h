// The engine's own CUDA kernels, for what cuDNN/cuBLAS do not cover exactly: pooling with
// torch's ceil_mode (and every channels-last pooling), N-input add (+ReLU), ReLU/copy and
// bias(+ReLU) on strided views, and conversion between element types and layouts.
//
// Every kernel takes float, half or bfloat16 views (all operands of one call share the type and
// the layout, except launch_convert's) and computes in float. All launches are asynchronous on
// `stream` and checked; none allocates (capture-safe).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "src/engine/op_kernels.h"
#include "src/engine/tensor_view.h"

namespace iostune {

struct PoolWindow {
    bool max = true;  // false: average
    int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
    bool count_include_pad = true;
};

// torch.nn.{Max,Avg}Pool2d semantics for any output size (so ceil_mode is the caller's choice of
// out.h/out.w): windows are clipped to the input; an average divides by the window clipped to
// the padded input (count_include_pad) or by the valid elements only.
void launch_pool2d(const TensorView& in, const TensorView& out, const PoolWindow& window,
                   cudaStream_t stream);

// out = sum(inputs), then max(0, .) if relu. Inputs and out have equal shapes.
void launch_add(const std::vector<TensorView>& inputs, const TensorView& out, bool relu,
                cudaStream_t stream);

// out = relu ? max(0, in) : in.
void launch_copy(const TensorView& in, const TensorView& out, bool relu, cudaStream_t stream);

// In place: x[n, c, ...] += bias[c] (if bias; `bias` holds x.c elements of x's type), then the
// activation.
void launch_bias_activation(const TensorView& x, const void* bias, const OutputActivation& act,
                            cudaStream_t stream);
inline void launch_bias_activation(const TensorView& x, const void* bias, bool relu,
                                   cudaStream_t stream) {
    const auto kind = relu ? OutputActivation::Kind::Relu : OutputActivation::Kind::None;
    launch_bias_activation(x, bias, OutputActivation{kind}, stream);
}

// Depthwise convolution (one filter per channel) over channels-last views, all of one type:
//   out[n, y, x, c] = act(bias[c] + sum_ij act_in(in[n, y*s - p + i*d, x*s - p + j*d, c])
//                                      * w[i, j, c])
// with act_in = ReLU if relu_input (a SepConv's pre-ReLU, fused into the load) and act the
// convolution's ReLU, fused activation or PReLU (or none). `weight` is [kernel_h, kernel_w, c]
// (the taps of one channel are c apart, so a warp reads each tap's weights for consecutive
// channels at once); `bias` may be null.
struct DepthwiseGeometry {
    int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
    int dilation_h = 1, dilation_w = 1;
};
// Widest: W channels per thread, the widest vector the views allow. Narrowed: W halved while the
// output gives fewer than half the GPU's resident threads (batch 1's small maps). Tiled: a block
// stages an input tile (with its halo, pre-ReLU applied) in shared memory and each thread slides
// its filter over it: no bounds checks or address arithmetic per tap (depthwise_tileable()).
enum class DepthwiseVariant { Widest, Narrowed, Tiled };
void launch_depthwise_nhwc(const TensorView& in, const TensorView& out, const void* weight,
                           const void* bias, const DepthwiseGeometry& g, bool relu_input,
                           const OutputActivation& act, DepthwiseVariant variant,
                           cudaStream_t stream);
// Whether Narrowed launches other packs than Widest for these views (else one kernel, one choice).
bool depthwise_packs_differ(const TensorView& in, const TensorView& out, const void* weight,
                            const void* bias);
// Whether the Tiled variant runs this geometry: a square 3, 5 or 7 filter of stride 1 or 2
// without dilation (every separable convolution of NASNet, RandWire, MobileNets).
bool depthwise_tileable(const DepthwiseGeometry& g);

// A batched merge's depthwise convolutions (MergeKind::Batched): jobs of one type, one input
// and output shape, one square kernel of 3, 5 or 7 taps, stride 1 or 2 and no dilation (what
// depthwise_batchable() accepts), each with its own views, filter, padding and pre-ReLU, in one
// launch per 8 jobs. No bias, no output activation (a SepConv's depthwise part has none).
struct DepthwiseJob {
    TensorView in, out;
    const void* weight = nullptr;  // [kernel, kernel, c], as launch_depthwise_nhwc's
    DepthwiseGeometry g;
    bool relu_input = false;
};
bool depthwise_batchable(const DepthwiseGeometry& g);
void launch_depthwise_nhwc_batched(const std::vector<DepthwiseJob>& jobs, cudaStream_t stream);

// A fully connected layer over at most kLinearRowsMax rows (batch items), in one launch:
//   y[r * ldy + o] = bias[o] + sum_i weight[o * k + i] * x[r * ldx + i]
// for r < rows and o < features; all of `dtype`, `bias` may be null (linear_kernel.cu). Above
// that many rows the product is cuBLAS's (op_plans.cpp).
inline constexpr int kLinearRowsMax = 8;
void launch_linear_rows(const void* x, int64_t ldx, const void* weight, const void* bias, void* y,
                        int64_t ldy, int rows, int k, int features, DType dtype,
                        cudaStream_t stream);

// Every row of each channels-last view set to its bias: out[pixel, c] = bias[c] (a batched
// merge's pointwise convolutions then add their products to it, cuBLAS's beta = 1). One launch.
struct BiasRows {
    TensorView out;
    const void* bias = nullptr;  // out.c values of out's type
};
void launch_fill_bias_rows(const std::vector<BiasRows>& views, cudaStream_t stream);

// `elements` values of `dtype` at `data`, uniform in [-1, 1) and fixed by `seed` (fill_kernel.cu):
// what memory holds before anything wrote it, so kernels are timed on real-looking data and
// compute-sanitizer's initcheck finds no read of uninitialised memory (trtexec fills its inputs
// the same way).
void launch_fill_uniform(void* data, int64_t elements, DType dtype, uint64_t seed,
                         cudaStream_t stream);

// A one-thread kernel that spins for `nanoseconds` (spin_kernel.cu): a perturbed replay's delay.
void launch_spin(uint64_t nanoseconds, cudaStream_t stream);

// dst = src element by element, converting the element type (round to nearest) and the layout.
// Same logical shape; either may be strided.
void launch_convert(const TensorView& src, const TensorView& dst, cudaStream_t stream);

}  // namespace iostune
