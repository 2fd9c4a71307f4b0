// An owned cuBLAS handle, one per stream lane like the cuDNN handles. It is given a workspace
// of its own so that cuBLAS never allocates while a CUDA graph is being captured.
// cublasSetStream() puts the handle back on cuBLAS's default workspace pool (the cuBLAS
// documentation says so), so set_stream() gives it the workspace again. Without that, cuBLAS ran
// in its own pool, and initcheck saw the classifier's split-K reduction read unwritten bytes
// there (call98); with it, none (call99; docs/memory.md).
#pragma once

#include <cublas_v2.h>

#include <cstddef>
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
    CublasHandle(CublasHandle&& other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)),
          workspace_(std::exchange(other.workspace_, nullptr)),
          workspace_bytes_(std::exchange(other.workspace_bytes_, 0)) {}
    CublasHandle& operator=(CublasHandle&& other) noexcept {
        std::swap(handle_, other.handle_);
        std::swap(workspace_, other.workspace_);
        std::swap(workspace_bytes_, other.workspace_bytes_);
        return *this;
    }

    cublasHandle_t get() const { return handle_; }
    // The workspace every call uses (the caller keeps it alive).
    void set_workspace(void* workspace, size_t bytes) {
        workspace_ = workspace;
        workspace_bytes_ = bytes;
        IOSTUNE_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace, bytes),
                             "giving a cuBLAS handle its workspace");
    }
    void set_stream(cudaStream_t stream) const {
        IOSTUNE_CUBLAS_CHECK(cublasSetStream(handle_, stream), "binding a cuBLAS handle to a stream");
        if (workspace_ != nullptr)
            IOSTUNE_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_, workspace_bytes_),
                                 "giving a cuBLAS handle its workspace again");
    }

private:
    cublasHandle_t handle_ = nullptr;
    void* workspace_ = nullptr;
    size_t workspace_bytes_ = 0;
};

}  // namespace iostune
