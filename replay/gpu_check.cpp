#include "replay/gpu_check.h"

#include <cuda_runtime.h>

namespace iostune {

std::string gpu_unavailable_reason() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count > 0) return "";
    return status != cudaSuccess ? cudaGetErrorString(status) : "0 CUDA devices";
}

}  // namespace iostune
