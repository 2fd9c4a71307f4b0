// How an engine stores its activations: NCHW (channels of an image are planes) or NHWC
// (channels-last: the channels of one pixel are contiguous, what cuDNN's fastest tensor-core
// kernels for 16-bit data want). Part of the engine's plan: recorded with every schedule and
// stage measurement, shown by `iostune report --schedule`.
#pragma once

#include <string>

#include "src/precision.h"

namespace iostune {

enum class TensorLayout { Nchw, Nhwc };

const char* to_string(TensorLayout layout);                    // "nchw" | "nhwc"
TensorLayout tensor_layout_from_string(const std::string& name);  // throws iostune::Error otherwise

// The layout an engine uses when nobody chose one (`iostune search` times both instead):
// channels-last wherever tensor cores run, NCHW for strict fp32 (the CPU reference's layout).
// Measured on the H100 with cuDNN 9.19 (2026-11-22, sequential schedules at batch 1): fp16
// NHWC 0.37 ms against NCHW 0.72 for ResNet-50; TF32 NHWC 0.50 against NCHW 0.78 for
// ResNet-50 and 0.89 against 1.44 for Inception V3 (for PyTorch's kernels, channels-last changes
// nothing in TF32, DESIGN.md; cuDNN's legacy API gives iostune faster NHWC TF32 kernels).
TensorLayout default_layout(Precision precision);

}  // namespace iostune
