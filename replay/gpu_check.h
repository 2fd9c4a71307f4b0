// Whether a CUDA device can be used, asked before anything that would fail deep inside CUDA.
#pragma once

#include <string>

namespace iostune {

// Empty when a GPU can be used, otherwise why not (any cudaGetDeviceCount error counts).
std::string gpu_unavailable_reason();

}  // namespace iostune
