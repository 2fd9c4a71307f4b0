// An owned, non-blocking CUDA stream (it does not synchronise with the legacy default stream,
// which stream capture requires).
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "src/engine/cuda_check.h"

namespace iostune {

class CudaStream {
public:
    CudaStream() {
        IOSTUNE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                           "creating a CUDA stream");
    }
    // With a CUDA stream priority (lower numbers are served first; cudaDeviceGetStreamPriority-
    // Range gives the device's range, and values outside it are clamped).
    explicit CudaStream(int priority) {
        IOSTUNE_CUDA_CHECK(
            cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority),
            "creating a CUDA stream with a priority");
    }
    ~CudaStream() {
        if (stream_ != nullptr) cudaStreamDestroy(stream_);
    }
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    CudaStream(CudaStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
    CudaStream& operator=(CudaStream&& other) noexcept {
        std::swap(stream_, other.stream_);
        return *this;
    }

    cudaStream_t get() const { return stream_; }
    void synchronize() const {
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream_), "waiting for a CUDA stream");
    }

private:
    cudaStream_t stream_ = nullptr;
};

}  // namespace iostune
