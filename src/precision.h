// The numeric precision a model runs in, one value for every layer (engine, profiler, cost
// models, schedule store, CLI):
//   fp32  strict fp32 FMA kernels (what the CPU reference is compared against)
//   tf32  fp32 storage, convolutions and GEMMs on TF32 tensor cores (PyTorch's default)
//   fp16  activations and weights stored as IEEE half, tensor cores, fp32 accumulation
//   bf16  the same with bfloat16 storage
// Schedules and stage measurements are keyed by its name, so a schedule searched in one
// precision is never replayed in another.
#pragma once

#include <string>

namespace iostune {

enum class Precision { Fp32, Tf32, Fp16, Bf16 };

const char* to_string(Precision precision);                   // "fp32" | "tf32" | "fp16" | "bf16"
Precision precision_from_string(const std::string& name);  // throws iostune::Error otherwise
// The names precision_from_string accepts, in the order above.
const char* const* precision_names();
constexpr int kPrecisionCount = 4;

// Activations and weights are 16-bit (fp16 or bf16).
inline bool is_half(Precision p) { return p == Precision::Fp16 || p == Precision::Bf16; }
// Bytes of one stored activation or weight element.
inline int element_bytes(Precision p) { return is_half(p) ? 2 : 4; }
// Convolutions and GEMMs may run on tensor cores.
inline bool uses_tensor_cores(Precision p) { return p != Precision::Fp32; }

// How far two schedules' outputs of one model, run in this precision on the same engine, may
// differ, relative to the output's largest magnitude. A merged convolution sums in another order
// (and may use another algorithm), and every rounding after it differs: TF32 keeps 10 mantissa
// bits of each product's inputs; fp16 (10 bits) and bf16 (7 bits) round every stored activation.
double schedule_tolerance(Precision p);

}  // namespace iostune
