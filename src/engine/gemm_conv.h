// A 1x1, stride-1, ungrouped convolution over channels-last views as one cuBLASLt matrix product:
// out[pixel, k] = act(sum_c in[pixel, c] * weight[k, c] + z[pixel, k] + bias[k]), the pixels'
// channel rows times the filter's transpose; the residual z is cuBLASLt's C (beta = 1), bias and
// ReLU its epilogue: a whole bottleneck tail (conv + add + ReLU) in one kernel.
//
// Why: cuDNN pads channel counts that are not a multiple of 8 around its own kernel; for
// RandWire's 154-channel pointwise convolutions at batch 16 (fp16, H100) that was an
// nhwcAddPaddingKernel before and after and a transform, ~50 of the op's ~90 microseconds.
// cuBLASLt takes any channel count, row stride (channel slices of concats and merged outputs)
// and alignment. The engine times cuBLASLt's heuristic shortlist beside cuDNN's algorithms, as
// ConvChoice "GEMM_<rank>" (path "gemm"), and keeps the fastest.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/engine/tensor_view.h"
#include "src/precision.h"

namespace iostune {

// cuBLAS's element type of a storage type, and the compute type of a precision: strict fp32
// keeps FMA arithmetic; TF32 lets the tensor cores round inputs to TF32, as cuDNN and PyTorch
// do; 16-bit storage accumulates in fp32.
cudaDataType_t cublas_data_type(DType type);
cublasComputeType_t cublas_compute_type(Precision precision);

// cuBLASLt's heuristic shortlist for a described product: up to `count` algorithms within
// `max_workspace` bytes for matrices A, B, C, D of these byte alignments; empty when it has none
// (CUBLAS_STATUS_NOT_SUPPORTED is no error). Throws iostune::Error on another failure.
std::vector<cublasLtMatmulHeuristicResult_t> lt_shortlist(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    size_t max_workspace, const std::array<uint32_t, 4>& alignments, int count,
    const std::string& what);

// An owned cuBLASLt handle (one per engine: cuBLASLt handles carry no stream).
class CublasLtHandle {
public:
    CublasLtHandle();
    cublasLtHandle_t get() const { return handle_.get(); }

private:
    struct Destroy {
        void operator()(cublasLtContext* h) const { cublasLtDestroy(h); }
    };
    std::unique_ptr<cublasLtContext, Destroy> handle_;
};

class GemmConv {
public:
    // `weight` holds out.c rows of in.c elements, in the views' element type; `bias` out.c
    // elements or null; `residual` a view shaped like `out`, or null. Asks cuBLASLt for up to
    // kCandidates algorithms within `max_workspace` bytes; throws iostune::Error on a cuBLASLt
    // failure.
    GemmConv(cublasLtHandle_t handle, const TensorView& in, const TensorView& out,
             const TensorView* residual, const void* weight, const void* bias, bool relu,
             Precision precision, size_t max_workspace, const std::string& context);
    ~GemmConv();
    GemmConv(const GemmConv&) = delete;
    GemmConv& operator=(const GemmConv&) = delete;

    static constexpr int kCandidates = 4;
    // cuBLASLt's heuristic shortlist for this product, best guess first.
    int candidates() const { return int(algorithms_.size()); }
    // Runs shortlist entry `rank` from now on; false when there is no such entry.
    bool select(int rank);
    int selected() const { return selected_; }
    size_t workspace_bytes() const;
    // Enqueues the product (capture-safe: the workspace is the caller's).
    void run(void* workspace, size_t workspace_bytes, cudaStream_t stream) const;
    // The same product on other views of the same shapes, strides and alignments (another
    // memory plan's places): the matrix layouts and the chosen algorithm stay.
    void rebind(const TensorView& in, const TensorView& out, const TensorView* residual);

private:
    void describe(const TensorView& in, const TensorView& out, const TensorView* residual,
                  const void* bias, bool relu, Precision precision, size_t max_workspace);
    void release();

    cublasLtHandle_t handle_;
    cublasLtMatmulDesc_t desc_ = nullptr;
    cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
    std::vector<cublasLtMatmulHeuristicResult_t> algorithms_;
    int selected_ = 0;
    const void* weight_;
    const void* in_;
    const void* residual_;  // cuBLASLt's C: z, or the output itself (times beta = 0)
    float beta_;
    void* out_;
    std::string context_;
};

}  // namespace iostune
