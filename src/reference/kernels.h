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

}  // namespace iostune::reference_detail
