// Rounding fp32 values to TF32 (tensor cores' 19-bit format: fp32's sign and exponent, 10
// mantissa bits). TF32 filters that tensor cores may read are rounded once, at upload
// (Engine::Impl::upload_filter): a tensor-core kernel reading fp32 may drop the other 13 bits,
// i.e. truncate toward zero, and a bias that shrinks every weight compounds layer after layer
// where nothing renormalises (EfficientNet-B0 TF32: 0.024-0.026 relative error unrounded, 0.013
// rounded; call145, H200). What fp32 arithmetic reads (biases, scales, the channels-last
// depthwise kernel's filter) is stored as given (upload_vector), as PyTorch keeps it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace iostune {

// The nearest TF32 value, ties away from zero (a carry into the exponent is still correct);
// infinities and NaNs are returned as given.
inline float round_to_tf32(float v) {
    if (!std::isfinite(v)) return v;
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits + 0x1000u) & ~0x1FFFu;
    std::memcpy(&v, &bits, sizeof bits);
    return v;
}

}  // namespace iostune
