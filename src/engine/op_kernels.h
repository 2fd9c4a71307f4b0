// The engine's kernels for the operators of deployed CNNs (graph.h: Activation, Binary,
// ChannelAffine, ChannelShuffle, Resize, ChannelNorm, SpatialPad, PRelu, GroupNorm, RadixSoftmax,
// StridedSlice, DepthToSpace, SpaceToDepth, Flatten), beside kernels.h's:
//   pointwise_kernels.cu     activations, PReLU, broadcasting binary arithmetic, per-channel
//                            affine maps
//   layout_kernels.cu        channel shuffle, spatial resize (nearest, bilinear), spatial pad
//   gather_kernels.cu        strided slices, depth_to_space, space_to_depth, flatten
//   channel_norm_kernel.cu   layer normalisation over the channels of each pixel
//   group_norm_kernel.cu     group (and instance) normalisation
//   radix_softmax_kernel.cu  split attention's softmax across branches
//   conv_transpose_kernel.cu a direct transposed convolution, where cuDNN has no algorithm
//
// Every kernel takes float, half or bfloat16 views of one type and one layout (NCHW or NHWC, any
// row stride) and computes in float. Parameter vectors (`scale`, `gamma`, ...) hold one element
// per channel in the views' type. All launches are asynchronous on `stream` and checked; none
// allocates (capture-safe). Plain C++17 (no graph.h): the kernels' own enums mirror the graph's.
#pragma once

#include <cuda_runtime.h>

#include "src/engine/tensor_view.h"

namespace iostune {

// graph.h's ActivationFunction, with the same meaning of alpha and beta.
enum class PointwiseFunction { Clip, Sigmoid, Silu, HardSigmoid, HardSwish, LeakyRelu, Gelu, Tanh };

// What a kernel applies to each value it writes (the depthwise and bias kernels: a convolution's
// ReLU, fused activation or PReLU, so that no other kernel passes over its output again).
struct OutputActivation {
    enum class Kind { None, Relu, Function, PRelu } kind = Kind::None;
    PointwiseFunction function = PointwiseFunction::Clip;
    float alpha = 0.0f, beta = 0.0f;
    const void* slope = nullptr;  // PRelu: one slope per channel, in the views' type
};

// out = f(in). Equal shapes.
void launch_activation(const TensorView& in, const TensorView& out, PointwiseFunction f,
                       float alpha, float beta, cudaStream_t stream);

// out = in >= 0 ? in : slope[c] * in. Equal shapes; `out` may be `in`.
void launch_prelu(const TensorView& in, const TensorView& out, const void* slope,
                  cudaStream_t stream);

// graph.h's BinaryOp.
enum class BinaryKind { Add, Sub, Mul, Div };

// out = a (op) b with broadcasting: out has the batch of both, and each of a's and b's C, H and W
// equals out's or is 1 (read at index 0 along that axis).
void launch_binary(const TensorView& a, const TensorView& b, const TensorView& out, BinaryKind op,
                   cudaStream_t stream);

// out[n, c, y, x] = scale[c] * in[n, c, y, x] + shift[c]. Equal shapes.
void launch_channel_affine(const TensorView& in, const TensorView& out, const void* scale,
                           const void* shift, cudaStream_t stream);

// ShuffleNet's channel shuffle: out channel k * groups + g = in channel g * (C / groups) + k.
void launch_channel_shuffle(const TensorView& in, const TensorView& out, int groups,
                            cudaStream_t stream);

// Spatial resize of `in` to out.h x out.w (graph.h's ResizeAttrs): nearest reads source index
// floor(dst * in / out); bilinear reads source (dst + 0.5) * in / out - 0.5 clamped at 0, or
// dst * (in - 1) / (out - 1) with align_corners.
void launch_resize(const TensorView& in, const TensorView& out, bool bilinear, bool align_corners,
                   cudaStream_t stream);

// Zero padding and cropping of H and W (graph.h's SpatialPadAttrs): out[n, c, y, x] =
// in[n, c, y - top, x - left], or 0 outside the input. A negative side crops; out.h must be
// in.h + top + bottom and out.w in.w + left + right.
void launch_spatial_pad(const TensorView& in, const TensorView& out, int top, int bottom, int left,
                        int right, cudaStream_t stream);

// Layer norm over the channels of each pixel: out = (in - mean) / sqrt(var + eps) * gamma + beta,
// mean and (biased) variance over the C channels of one (n, y, x). Equal shapes.
void launch_channel_norm(const TensorView& in, const TensorView& out, const void* gamma,
                         const void* beta, float eps, cudaStream_t stream);

// Group normalisation (graph.h's GroupNormAttrs): each image's `groups` runs of C / groups
// channels normalised over their channels and pixels (mean, then biased variance, two passes),
// then out = normalised * gamma[c] + beta[c]. Equal shapes.
void launch_group_norm(const TensorView& in, const TensorView& out, const void* gamma,
                       const void* beta, int groups, float eps, cudaStream_t stream);

// Split attention's softmax across `radix` branches per pixel (graph.h's RadixSoftmaxAttrs): the
// input's channels [cardinality, radix, r], the output's [radix, cardinality, r]. Equal shapes.
void launch_radix_softmax(const TensorView& in, const TensorView& out, int radix,
                          int cardinality, cudaStream_t stream);

// out[n, c, y, x] = in[n, c_begin + c * c_step, h_begin + y * h_step, w_begin + x * w_step]
// (graph.h's StridedSliceAttrs; out's extent gives the counts).
struct SliceGeometry {
    int c_begin = 0, c_step = 1, h_begin = 0, h_step = 1, w_begin = 0, w_step = 1;
};
void launch_strided_slice(const TensorView& in, const TensorView& out, const SliceGeometry& g,
                          cudaStream_t stream);

// graph.h's BlockOrder: where a block offset sits among the channels.
enum class ChannelBlockOrder { Dcr, Crd };

// depth_to_space ([N, C, H, W] -> [N, C / b^2, H * b, W * b]) and space_to_depth ([N, C, H, W] ->
// [N, C * b^2, H / b, W / b]) with block b, as graph.h's DepthSpaceAttrs.
void launch_depth_to_space(const TensorView& in, const TensorView& out, int block,
                           ChannelBlockOrder order, cudaStream_t stream);
void launch_space_to_depth(const TensorView& in, const TensorView& out, int block,
                           ChannelBlockOrder order, cudaStream_t stream);

// [N, C, H, W] -> [N, C * H * W, 1, 1] in NCHW order (a copy in NCHW storage, a transpose of each
// image in NHWC).
void launch_flatten(const TensorView& in, const TensorView& out, cudaStream_t stream);

// torch.nn.ConvTranspose2d's geometry.
struct ConvTransposeGeometry {
    int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
    int dilation_h = 1, dilation_w = 1, groups = 1;
};

// out[n, o] = bias[o] + sum over the input channels i of o's group and the taps (ky, kx) with
// oy = iy * stride_h - pad_h + ky * dilation_h (and likewise x) of in[n, i, iy, ix] *
// weight[i, o % (Cout / groups), ky, kx]. `weight` is the filter [Cin, Cout/groups, kh, kw] packed
// in the views' layout (KCRS or KRSC); `bias` may be null. Output padding is out's extra size.
void launch_conv_transpose(const TensorView& in, const TensorView& out, const void* weight,
                           const void* bias, const ConvTransposeGeometry& g, cudaStream_t stream);

}  // namespace iostune
