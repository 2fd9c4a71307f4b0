// The two ceilings of the current GPU, measured rather than taken from a datasheet: arithmetic
// rate (a large cuBLAS GEMM in the precision: SGEMM strict or on TF32 tensor cores, or fp16/bf16
// tensor cores with fp32 accumulation) and DRAM bandwidth (a large device-to-device copy,
// counting bytes read plus written). An op whose arithmetic intensity (FLOPs per byte, bytes at
// the precision's element size) is above their ratio (the ridge point) is compute-bound.
#pragma once

#include "src/engine/engine.h"

namespace iostune {

struct DeviceCeilings {
    double flops_per_s = 0;
    double bytes_per_s = 0;
    Precision precision = Precision::Tf32;
    double ridge_flops_per_byte() const { return bytes_per_s > 0 ? flops_per_s / bytes_per_s : 0; }
};

DeviceCeilings measure_device_ceilings(Precision precision);

}  // namespace iostune
