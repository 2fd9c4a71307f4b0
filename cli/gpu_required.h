// Commands that need a GPU call require_gpu() first, so that on a machine without one the user
// gets one clear sentence instead of a CUDA error from deep inside.
#pragma once

#include <string>

namespace iostune::cli {

// Throws iostune::Error naming `what` if no CUDA device can be used (any error from
// cudaGetDeviceCount counts as "no GPU").
void require_gpu(const std::string& what);
bool gpu_available(std::string* why = nullptr);

}  // namespace iostune::cli
