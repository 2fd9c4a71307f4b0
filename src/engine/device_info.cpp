#include "src/engine/device_info.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <fmt/format.h>

#include "src/engine/cuda_check.h"

namespace iostune {
namespace {

std::string cuda_version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

}  // namespace

std::string DeviceInfo::compute_capability() const { return fmt::format("{}.{}", cc_major, cc_minor); }
std::string DeviceInfo::driver_string() const { return cuda_version_string(driver_version); }
std::string DeviceInfo::runtime_string() const { return cuda_version_string(runtime_version); }
std::string DeviceInfo::cudnn_string() const {
    // cuDNN 9 encodes major*10000 + minor*100 + patch.
    return fmt::format("{}.{}.{}", cudnn_version / 10000, (cudnn_version % 10000) / 100,
                       cudnn_version % 100);
}
std::string DeviceInfo::summary() const {
    return fmt::format("{} (sm_{}{}, {} SMs, {:.0f} GiB), driver CUDA {}, runtime {}, cuDNN {}, "
                       "cuBLAS {}",
                       name, cc_major, cc_minor, sm_count,
                       double(total_memory_bytes) / (1024.0 * 1024.0 * 1024.0), driver_string(),
                       runtime_string(), cudnn_string(), cublas_version);
}

DeviceInfo query_device_info(int device) {
    const std::string context = fmt::format("querying CUDA device {}", device);
    DeviceInfo info;
    info.device = device;
    cudaDeviceProp prop{};
    IOSTUNE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device), context);
    info.name = prop.name;
    info.cc_major = prop.major;
    info.cc_minor = prop.minor;
    info.sm_count = prop.multiProcessorCount;
    info.total_memory_bytes = prop.totalGlobalMem;
    info.l2_cache_bytes = prop.l2CacheSize;
    IOSTUNE_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version), context);
    IOSTUNE_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version), context);
    info.cudnn_version = cudnnGetVersion();
    IOSTUNE_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &info.cublas_version), context);
    int minor = 0, patch = 0;
    IOSTUNE_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor), context);
    IOSTUNE_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch), context);
    info.cublas_version = info.cublas_version * 10000 + minor * 100 + patch;
    return info;
}

}  // namespace iostune
