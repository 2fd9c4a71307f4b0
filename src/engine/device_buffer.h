// An owned device allocation (cudaMalloc). Allocated when the engine plans, never on the
// execution path.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstddef>
#include <utility>

#include "src/engine/cuda_check.h"

namespace iostune {

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
        if (bytes > 0) {
            IOSTUNE_CUDA_CHECK(cudaMalloc(&ptr_, bytes),
                               fmt::format("allocating {:.1f} MiB of device memory",
                                           double(bytes) / (1024.0 * 1024.0)));
        }
    }
    ~DeviceBuffer() {
        if (ptr_ != nullptr) cudaFree(ptr_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        std::swap(ptr_, other.ptr_);
        std::swap(bytes_, other.bytes_);
        return *this;
    }

    void* get() const { return ptr_; }
    float* floats() const { return static_cast<float*>(ptr_); }
    size_t bytes() const { return bytes_; }

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace iostune
