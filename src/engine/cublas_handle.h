// An owned cuBLAS handle, one per stream lane like the cuDNN handles. It is given a workspace
// of its own so that cuBLAS never allocates while a CUDA graph is being captured.
#pragma once

#include <cublas_v2.h>

#include <utility>

#include "src/engine/cuda_check.h"

namespace iostune {

class CublasHandle {
public:
    CublasHandle() { IOSTUNE_CUBLAS_CHECK(cublasCreate(&handle_), "creating a cuBLAS handle"); }
    ~CublasHandle() {
        if (handle_ != nullptr) cublasDestroy(handle_);
    }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    CublasHandle(CublasHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    CublasHandle& operator=(CublasHandle&& other) noexcept {
        std::swap(handle_, other.handle_);
        return *this;
    }

    cublasHandle_t get() const { return handle_; }
    void set_stream(cudaStream_t stream) const {
        IOSTUNE_CUBLAS_CHECK(cublasSetStream(handle_, stream), "binding a cuBLAS handle to a stream");
    }

private:
    cublasHandle_t handle_ = nullptr;
};

}  // namespace iostune
