#include "src/precision.h"

#include <fmt/format.h>

#include "src/error.h"

namespace iostune {

namespace {
constexpr const char* kNames[kPrecisionCount] = {"fp32", "tf32", "fp16", "bf16"};
}  // namespace

const char* to_string(Precision precision) { return kNames[int(precision)]; }

const char* const* precision_names() { return kNames; }

double schedule_tolerance(Precision p) {
    switch (p) {
        case Precision::Fp32: return 1e-3;
        case Precision::Tf32: return 2e-2;
        case Precision::Fp16: return 3e-2;
        case Precision::Bf16: return 1e-1;
    }
    return 1e-3;
}

Precision precision_from_string(const std::string& name) {
    for (int p = 0; p < kPrecisionCount; ++p)
        if (name == kNames[p]) return Precision(p);
    throw Error(fmt::format("unknown precision '{}'; use fp32, tf32, fp16 or bf16", name));
}

}  // namespace iostune
