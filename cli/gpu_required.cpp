#include "cli/gpu_required.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "src/error.h"

namespace iostune::cli {

bool gpu_available(std::string* why) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count > 0) return true;
    if (why) *why = status != cudaSuccess ? cudaGetErrorString(status) : "0 CUDA devices";
    return false;
}

void require_gpu(const std::string& what) {
    std::string why;
    if (!gpu_available(&why))
        throw Error(fmt::format("{} needs an NVIDIA GPU, and this machine has none usable ({}). "
                                "Run it on the GPU machine; `iostune search --cost sim` works "
                                "without one.",
                                what, why),
                    ErrorKind::NoGpu);
}

}  // namespace iostune::cli
