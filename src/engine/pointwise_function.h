// graph.h's ActivationFunction as the engine kernels' PointwiseFunction (op_kernels.h mirrors the
// graph's enums so that the CUDA sources need not include graph.h).
#pragma once

#include <optional>

#include "src/engine/op_kernels.h"
#include "src/error.h"
#include "src/graph.h"

namespace iostune {

inline PointwiseFunction pointwise_function(ActivationFunction f) {
    switch (f) {
        case ActivationFunction::Clip: return PointwiseFunction::Clip;
        case ActivationFunction::Sigmoid: return PointwiseFunction::Sigmoid;
        case ActivationFunction::Silu: return PointwiseFunction::Silu;
        case ActivationFunction::HardSigmoid: return PointwiseFunction::HardSigmoid;
        case ActivationFunction::HardSwish: return PointwiseFunction::HardSwish;
        case ActivationFunction::LeakyRelu: return PointwiseFunction::LeakyRelu;
        case ActivationFunction::Gelu: return PointwiseFunction::Gelu;
        case ActivationFunction::Tanh: return PointwiseFunction::Tanh;
    }
    throw Error("unknown activation function");
}

// A convolution's ReLU, fused activation or PReLU (`slope`: its slopes; at most one of the
// three) as a kernel's OutputActivation.
inline OutputActivation output_activation(bool relu, const std::optional<ActivationAttrs>& a,
                                          const void* slope = nullptr) {
    if (slope) return {OutputActivation::Kind::PRelu, PointwiseFunction::Clip, 0.0f, 0.0f, slope};
    if (a) return {OutputActivation::Kind::Function, pointwise_function(a->function), a->alpha,
                   a->beta};
    return {relu ? OutputActivation::Kind::Relu : OutputActivation::Kind::None};
}

// out = f(in) for an Activation op or a convolution's fused activation (`out` may be `in`).
inline void launch_activation(const TensorView& in, const TensorView& out,
                              const ActivationAttrs& a, cudaStream_t stream) {
    launch_activation(in, out, pointwise_function(a.function), a.alpha, a.beta, stream);
}

}  // namespace iostune
