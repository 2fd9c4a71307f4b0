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

// The layout an engine uses when nobody chose one: channels-last for 16-bit precisions (cuDNN's
// half kernels are NHWC; fp16 channels-last is what users deploy), NCHW for fp32 and TF32
// (channels-last changes nothing there: measured with PyTorch on the H100, DESIGN.md).
TensorLayout default_layout(Precision precision);

}  // namespace iostune
