// Status checks for CUDA runtime, cuDNN and cuBLAS calls. Every failure throws iostune::Error
// naming the call, the library's own error text and what the engine was doing (the context),
// e.g. "cudnnConvolutionForward failed: CUDNN_STATUS_BAD_PARAM (while running op 12 'conv3x3')".
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <fmt/format.h>

#include <string>

#include "src/error.h"

namespace iostune::detail {

[[noreturn]] inline void throw_gpu_error(const char* call, const char* status,
                                         const std::string& context, const char* file, int line) {
    throw Error(fmt::format("{} failed: {} (while {}) [{}:{}]", call, status, context, file, line));
}

inline void check_cuda(cudaError_t status, const char* call, const std::string& context,
                       const char* file, int line) {
    if (status != cudaSuccess) {
        cudaGetLastError();  // reset a non-sticky error so later launch checks do not report it
        throw_gpu_error(call, fmt::format("{} ({})", cudaGetErrorName(status),
                                          cudaGetErrorString(status)).c_str(),
                        context, file, line);
    }
}

inline void check_cudnn(cudnnStatus_t status, const char* call, const std::string& context,
                        const char* file, int line) {
    if (status != CUDNN_STATUS_SUCCESS) {
        throw_gpu_error(call, cudnnGetErrorString(status), context, file, line);
    }
}

inline void check_cublas(cublasStatus_t status, const char* call, const std::string& context,
                         const char* file, int line) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        throw_gpu_error(call, cublasGetStatusString(status), context, file, line);
    }
}

}  // namespace iostune::detail

// `context` is any expression convertible to std::string; it is only evaluated on failure.
#define IOSTUNE_CUDA_CHECK(expr, context)                                                    \
    do {                                                                                     \
        const cudaError_t iostune_status_ = (expr);                                          \
        if (iostune_status_ != cudaSuccess)                                                  \
            ::iostune::detail::check_cuda(iostune_status_, #expr, (context), __FILE__, __LINE__); \
    } while (0)

#define IOSTUNE_CUDNN_CHECK(expr, context)                                                    \
    do {                                                                                      \
        const cudnnStatus_t iostune_status_ = (expr);                                         \
        if (iostune_status_ != CUDNN_STATUS_SUCCESS)                                          \
            ::iostune::detail::check_cudnn(iostune_status_, #expr, (context), __FILE__, __LINE__); \
    } while (0)

#define IOSTUNE_CUBLAS_CHECK(expr, context)                                                    \
    do {                                                                                       \
        const cublasStatus_t iostune_status_ = (expr);                                         \
        if (iostune_status_ != CUBLAS_STATUS_SUCCESS)                                          \
            ::iostune::detail::check_cublas(iostune_status_, #expr, (context), __FILE__, __LINE__); \
    } while (0)
