#include "src/math_mode.h"

#include <fmt/format.h>

#include "src/error.h"

namespace iostune {

const char* to_string(MathMode mode) { return mode == MathMode::Tf32 ? "tf32" : "fp32"; }

MathMode math_mode_from_string(const std::string& name) {
    if (name == "fp32") return MathMode::Fp32;
    if (name == "tf32") return MathMode::Tf32;
    throw Error(fmt::format("unknown math mode '{}'; use fp32 or tf32", name));
}

}  // namespace iostune
