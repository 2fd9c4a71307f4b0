// The two ceilings of the current GPU, measured rather than taken from a datasheet: arithmetic
// rate (a large cuBLAS SGEMM in the engine's math mode) and DRAM bandwidth (a large
// device-to-device copy, counting bytes read plus written). An op whose arithmetic intensity
// (FLOPs per byte) is above their ratio (the ridge point) is compute-bound.
#pragma once

#include "src/engine/engine.h"

namespace iostune {

struct DeviceCeilings {
    double flops_per_s = 0;
    double bytes_per_s = 0;
    MathMode math = MathMode::Tf32;
    double ridge_flops_per_byte() const { return bytes_per_s > 0 ? flops_per_s / bytes_per_s : 0; }
};

DeviceCeilings measure_device_ceilings(MathMode math);

}  // namespace iostune
