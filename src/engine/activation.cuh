// The activation functions of the engine's kernels, in float, with the CPU reference's formulas
// (src/reference/channel_ops.cpp): shared by the activation kernel and the kernels that apply an
// activation to what they write (OutputActivation, op_kernels.h).
#pragma once

#include <cuda_runtime.h>

#include "src/engine/kernel_support.cuh"
#include "src/engine/op_kernels.h"

namespace iostune {

__device__ __forceinline__ float clamp01(float v) { return fminf(fmaxf(v, 0.0f), 1.0f); }

__device__ __forceinline__ float activate(PointwiseFunction f, float alpha, float beta, float x) {
    switch (f) {
        case PointwiseFunction::Clip: return x < alpha ? alpha : (x > beta ? beta : x);
        case PointwiseFunction::Sigmoid: return 1.0f / (1.0f + expf(-x));
        case PointwiseFunction::Silu: return x / (1.0f + expf(-x));
        case PointwiseFunction::HardSigmoid: return clamp01(alpha * x + beta);
        case PointwiseFunction::HardSwish: return x * clamp01(x / 6.0f + 0.5f);
        case PointwiseFunction::LeakyRelu: return x >= 0.0f ? x : alpha * x;
        case PointwiseFunction::Gelu: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
        case PointwiseFunction::Tanh: return tanhf(x);
    }
    return x;
}

__device__ __forceinline__ float prelu(float x, float slope) { return x >= 0.0f ? x : slope * x; }

// What a kernel writes for value x of channel `channel` (a PReLU's slopes are of type T).
template <class T>
__device__ __forceinline__ float activate(const OutputActivation& a, float x, int channel) {
    switch (a.kind) {
        case OutputActivation::Kind::None: return x;
        case OutputActivation::Kind::Relu: return fmaxf(x, 0.0f);
        case OutputActivation::Kind::Function: return activate(a.function, a.alpha, a.beta, x);
        case OutputActivation::Kind::PRelu:
            return prelu(x, kernel_support::load(static_cast<const T*>(a.slope) + channel));
    }
    return x;
}

}  // namespace iostune
