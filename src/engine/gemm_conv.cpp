#include "src/engine/gemm_conv.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "src/engine/cuda_check.h"

namespace iostune {

cudaDataType_t cublas_data_type(DType type) {
    switch (type) {
        case DType::F16: return CUDA_R_16F;
        case DType::BF16: return CUDA_R_16BF;
        default: return CUDA_R_32F;
    }
}

cublasComputeType_t cublas_compute_type(Precision precision) {
    return precision == Precision::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

std::vector<cublasLtMatmulHeuristicResult_t> lt_shortlist(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    size_t max_workspace, const std::array<uint32_t, 4>& alignments, int count,
    const std::string& what) {
    cublasLtMatmulPreference_t preference = nullptr;
    IOSTUNE_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference), what);
    const uint64_t workspace = max_workspace;
    cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
    const cublasLtMatmulPreferenceAttributes_t aligned[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (size_t k = 0; k < 4 && status == CUBLAS_STATUS_SUCCESS; ++k)
        status = cublasLtMatmulPreferenceSetAttribute(preference, aligned[k], &alignments[k],
                                                      sizeof(uint32_t));
    std::vector<cublasLtMatmulHeuristicResult_t> shortlist(static_cast<size_t>(count));
    int returned = 0;
    if (status == CUBLAS_STATUS_SUCCESS)
        status = cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, d, preference, count,
                                                shortlist.data(), &returned);
    cublasLtMatmulPreferenceDestroy(preference);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED) returned = 0;
    else IOSTUNE_CUBLAS_CHECK(status, what);
    shortlist.resize(size_t(returned));
    return shortlist;
}

namespace {

// cuBLASLt's heuristics assume 256-byte aligned matrices unless told.
uint32_t alignment_of(const void* p) { return byte_alignment(p, 256); }

}  // namespace

CublasLtHandle::CublasLtHandle() {
    cublasLtHandle_t h = nullptr;
    IOSTUNE_CUBLAS_CHECK(cublasLtCreate(&h), "creating a cuBLASLt handle");
    handle_.reset(h);
}

GemmConv::GemmConv(cublasLtHandle_t handle, const TensorView& in, const TensorView& out,
                   const TensorView* residual, const void* weight, const void* bias, bool relu,
                   Precision precision, size_t max_workspace, const std::string& context)
    : handle_(handle),
      weight_(weight),
      in_(in.data),
      residual_(residual != nullptr ? residual->data : out.data),
      beta_(residual != nullptr ? 1.0f : 0.0f),
      out_(out.data),
      context_(context) {
    try {
        describe(in, out, residual, bias, relu, precision, max_workspace);
    } catch (...) {
        release();
        throw;
    }
}

void GemmConv::rebind(const TensorView& in, const TensorView& out, const TensorView* residual) {
    in_ = in.data;
    out_ = out.data;
    residual_ = residual != nullptr ? residual->data : out.data;
}

void GemmConv::describe(const TensorView& in, const TensorView& out, const TensorView* residual,
                        const void* bias, bool relu, Precision precision, size_t max_workspace) {
    // Column-major, as cuBLASLt sees it: D (out.c x pixels, ld = out row stride) =
    // A^T (the filter, stored in.c x out.c) x B (in.c x pixels, ld = in row stride).
    const cudaDataType_t type = cublas_data_type(in.dtype);
    const uint64_t pixels = uint64_t(out.n) * out.h * out.w;
    const std::string what = context_ + " (cuBLASLt 1x1 convolution)";
    IOSTUNE_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, cublas_compute_type(precision), CUDA_R_32F),
                         what);
    const cublasOperation_t transpose = CUBLAS_OP_T;
    IOSTUNE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA,
                                                        &transpose, sizeof(transpose)),
                         what);
    cublasLtEpilogue_t epilogue = bias != nullptr ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS
                                                          : CUBLASLT_EPILOGUE_BIAS)
                                                  : (relu ? CUBLASLT_EPILOGUE_RELU
                                                          : CUBLASLT_EPILOGUE_DEFAULT);
    IOSTUNE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                        &epilogue, sizeof(epilogue)),
                         what);
    if (bias != nullptr) {
        IOSTUNE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                                 desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
                             what);
        IOSTUNE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                                 desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)),
                             what);
    }
    IOSTUNE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, type, uint64_t(in.c), uint64_t(out.c),
                                                    int64_t(in.c)),
                         what);
    IOSTUNE_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&b_, type, uint64_t(in.c), pixels, in.row_stride), what);
    IOSTUNE_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&d_, type, uint64_t(out.c), pixels, out.row_stride), what);
    const int64_t c_stride = residual != nullptr ? residual->row_stride : out.row_stride;
    IOSTUNE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_, type, uint64_t(out.c), pixels, c_stride),
                         what);

    // No algorithm for this product is not an error: the convolution has cuDNN's.
    algorithms_ = lt_shortlist(handle_, desc_, a_, b_, c_, d_, max_workspace,
                               {alignment_of(weight_), alignment_of(in.data),
                                alignment_of(residual_), alignment_of(out.data)},
                               kCandidates, what);
}

GemmConv::~GemmConv() { release(); }

void GemmConv::release() {
    for (cublasLtMatrixLayout_t* layout : {&d_, &c_, &b_, &a_})
        if (*layout != nullptr) cublasLtMatrixLayoutDestroy(std::exchange(*layout, nullptr));
    if (desc_ != nullptr) cublasLtMatmulDescDestroy(std::exchange(desc_, nullptr));
}

bool GemmConv::select(int rank) {
    if (rank < 0 || rank >= candidates()) return false;
    selected_ = rank;
    return true;
}

size_t GemmConv::workspace_bytes() const {
    return algorithms_.empty() ? 0 : algorithms_[size_t(selected_)].workspaceSize;
}

void GemmConv::run(void* workspace, size_t workspace_bytes, cudaStream_t stream) const {
    const float one = 1.0f;
    IOSTUNE_CUBLAS_CHECK(
        cublasLtMatmul(handle_, desc_, &one, weight_, a_, in_, b_, &beta_, residual_, c_, out_, d_,
                       &algorithms_.at(size_t(selected_)).algo, workspace, workspace_bytes, stream),
        context_);
}

}  // namespace iostune
