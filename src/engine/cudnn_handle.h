// An owned cuDNN handle. The engine keeps one per stream lane (with its own workspace), since
// convolutions running concurrently must not share a workspace.
#pragma once

#include <cudnn.h>

#include <utility>

#include "src/engine/cuda_check.h"

namespace iostune {

class CudnnHandle {
public:
    CudnnHandle() { IOSTUNE_CUDNN_CHECK(cudnnCreate(&handle_), "creating a cuDNN handle"); }
    ~CudnnHandle() {
        if (handle_ != nullptr) cudnnDestroy(handle_);
    }
    CudnnHandle(const CudnnHandle&) = delete;
    CudnnHandle& operator=(const CudnnHandle&) = delete;
    CudnnHandle(CudnnHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    CudnnHandle& operator=(CudnnHandle&& other) noexcept {
        std::swap(handle_, other.handle_);
        return *this;
    }

    cudnnHandle_t get() const { return handle_; }
    void set_stream(cudaStream_t stream) const {
        IOSTUNE_CUDNN_CHECK(cudnnSetStream(handle_, stream), "binding a cuDNN handle to a stream");
    }

private:
    cudnnHandle_t handle_ = nullptr;
};

}  // namespace iostune
