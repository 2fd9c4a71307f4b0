// The loops behind reference_op, one per operator family (internal to src/reference).
#pragma once

#include <vector>

#include "src/graph.h"
#include "src/tensor.h"

namespace iostune::reference_detail {

// A 2-D convolution in torch.nn.Conv2d terms (ConvAttrs; its `bias` flag is not read: the bias
// pointer decides). weight is [out, in/groups, kh, kw] row-major; bias (nullptr = none) is [out].
// Writes the convolution of `in` into `out`, whose shape the caller has inferred.
void conv2d(const HostTensor& in, const float* weight, const float* bias, const ConvAttrs& spec,
            HostTensor& out);

// Pooling into `out` (shape inferred by the caller), with torch's padding and divisor rules.
void max_pool(const HostTensor& in, const PoolAttrs& attrs, HostTensor& out);
void avg_pool(const HostTensor& in, const PoolAttrs& attrs, HostTensor& out);

void concat_channels(const std::vector<const HostTensor*>& inputs, HostTensor& out);
void add(const std::vector<const HostTensor*>& inputs, bool relu, HostTensor& out);
void relu_inplace(HostTensor& t);
// out[n, o] = bias[o] + sum_i weight[o, i] * in[n, i] over the flattened C*H*W input.
void linear(const HostTensor& in, const float* weight, const float* bias, HostTensor& out);
void softmax_channels(const HostTensor& in, HostTensor& out);

// channel_ops.cpp: `out` has the inferred shape; params are the [C] vectors of param_shapes().
// `out` may be `in` (a convolution's fused activation is applied in place).
void activation(const HostTensor& in, const ActivationAttrs& attrs, HostTensor& out);
void binary(const HostTensor& a, const HostTensor& b, BinaryOp op, HostTensor& out);
void channel_affine(const HostTensor& in, const float* scale, const float* shift,
                    HostTensor& out);
void channel_shuffle(const HostTensor& in, int groups, HostTensor& out);
void channel_slice(const HostTensor& in, int begin, HostTensor& out);
void channel_norm(const HostTensor& in, float eps, const float* gamma, const float* beta,
                  HostTensor& out);
// y = x >= 0 ? x : slope[c] * x (`out` may be `in`: a convolution's fused PReLU).
void prelu(const HostTensor& in, const float* slope, HostTensor& out);
// The softmax across branches of split attention, in double.
void radix_softmax(const HostTensor& in, const RadixSoftmaxAttrs& attrs, HostTensor& out);

// group_norm.cpp: gamma and beta are [C].
void group_norm(const HostTensor& in, const GroupNormAttrs& attrs, const float* gamma,
                const float* beta, HostTensor& out);

// rearrange.cpp: elements moved, nothing computed.
void strided_slice(const HostTensor& in, const StridedSliceAttrs& attrs, HostTensor& out);
void depth_to_space(const HostTensor& in, const DepthSpaceAttrs& attrs, HostTensor& out);
void space_to_depth(const HostTensor& in, const DepthSpaceAttrs& attrs, HostTensor& out);
void flatten(const HostTensor& in, HostTensor& out);

// spatial_pad.cpp: zero padding (positive sides) and cropping (negative sides) of H and W.
void spatial_pad(const HostTensor& in, const SpatialPadAttrs& attrs, HostTensor& out);

// resize.cpp: weight is [in, out/groups, kh, kw]; bias (nullptr = none) is [out].
void resize(const HostTensor& in, const ResizeAttrs& attrs, HostTensor& out);
void conv_transpose2d(const HostTensor& in, const float* weight, const float* bias,
                      const ConvTransposeAttrs& attrs, HostTensor& out);

}  // namespace iostune::reference_detail
