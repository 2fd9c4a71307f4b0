// How fp32 convolutions and GEMMs are computed: strict fp32 FMA kernels, or TF32 tensor cores
// (cuDNN's default math on Ampere and later, PyTorch's default for convolutions). One definition
// shared by the engine, the profiler and the cost models; both spellings of each value are kept
// because both are used across the code base.
#pragma once

#include <string>

namespace iostune {

enum class MathMode { Fp32, Tf32, FP32 = Fp32, TF32 = Tf32 };

const char* to_string(MathMode mode);                      // "fp32" | "tf32"
MathMode math_mode_from_string(const std::string& name);  // "fp32" | "tf32"; throws otherwise

}  // namespace iostune
