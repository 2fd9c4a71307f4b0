#include "src/engine/batched_sepconv.h"

#include <fmt/format.h>

#include <climits>
#include <map>

#include "src/engine/cuda_check.h"
#include "src/engine/gemm_conv.h"
#include "src/error.h"

namespace iostune {

namespace {

bool refuse(std::string* why, std::string reason) {
    if (why) *why = std::move(reason);
    return false;
}

}  // namespace

bool BatchedSepConv::supports(const std::vector<Member>& members, std::string* why) {
    if (members.size() < 2) return refuse(why, "a batched merge needs two or more members");
    const Member& first = members.front();
    for (const Member& m : members) {
        if (!m.in.nhwc() || !m.out.nhwc() || !m.depthwise_out.nhwc())
            return refuse(why, "the batched kernels are channels-last only");
        if (m.in.dtype != first.in.dtype || m.out.dtype != first.in.dtype ||
            m.depthwise_out.dtype != first.in.dtype)
            return refuse(why, "members of different element types");
        if (!m.in.same_shape(first.in) || !m.out.same_shape(first.out) ||
            !m.depthwise_out.same_shape(first.depthwise_out) || m.depthwise_out.c != m.in.c)
            return refuse(why, "members of different shapes");
        if (!m.depthwise_out.packed())
            return refuse(why, "a depthwise result that is not packed");
        if (!depthwise_batchable(m.g))
            return refuse(why, fmt::format("a {}x{} depthwise kernel of stride {} and dilation {} "
                                           "(batched: square 3, 5 or 7, stride 1 or 2, no "
                                           "dilation)",
                                           m.g.kernel_h, m.g.kernel_w, m.g.stride_h,
                                           m.g.dilation_h));
        if (m.g.stride_h != first.g.stride_h) return refuse(why, "members of different strides");
        if (m.depthwise_weight == nullptr || m.pointwise_weight == nullptr)
            return refuse(why, "a member without its channels-last filters");
        if ((m.bias == nullptr) != (first.bias == nullptr))
            return refuse(why, "members with and without a bias");
        if (m.out.row_stride > INT_MAX || m.in.row_stride > INT_MAX || m.out.rows() > INT_MAX)
            return refuse(why, "views beyond cuBLAS's 32-bit sizes");
    }
    return true;
}

BatchedSepConv::BatchedSepConv(std::vector<Member> members, Precision precision,
                               std::string context)
    : members_(std::move(members)), precision_(precision), context_(std::move(context)) {
    std::string why;
    if (!supports(members_, &why))
        throw Error(fmt::format("{}: cannot run batched: {}", context_, why));
    std::map<int, std::vector<DepthwiseJob>> by_kernel;
    std::map<int64_t, std::vector<int>> by_ldc;
    for (size_t k = 0; k < members_.size(); ++k) {
        const Member& m = members_[k];
        by_kernel[m.g.kernel_h].push_back({m.in, m.depthwise_out, m.depthwise_weight, m.g,
                                           m.relu_input});
        if (m.bias) biases_.push_back({m.out, m.bias});
        by_ldc[m.out.row_stride].push_back(int(k));
    }
    for (auto& [kernel, jobs] : by_kernel) depthwise_.push_back(std::move(jobs));
    // Tables: A (weights), B (depthwise results), C (outputs), members grouped by ldc.
    const size_t n = members_.size();
    std::vector<const void*> table(3 * n);
    int slot = 0;
    for (const auto& [ldc, ids] : by_ldc) {
        gemms_.push_back({slot, int(ids.size()), ldc});
        for (int k : ids) {
            const Member& m = members_[size_t(k)];
            table[size_t(slot)] = m.pointwise_weight;
            table[n + size_t(slot)] = m.depthwise_out.data;
            table[2 * n + size_t(slot)] = m.out.data;
            ++slot;
        }
    }
    tables_ = DeviceBuffer(table.size() * sizeof(void*));
    IOSTUNE_CUDA_CHECK(cudaMemcpy(tables_.get(), table.data(), tables_.bytes(),
                                  cudaMemcpyHostToDevice),
                       context_ + ": uploading the batched GEMM's pointer tables");
}

void BatchedSepConv::run(cublasHandle_t cublas, cudaStream_t stream) const {
    for (const auto& jobs : depthwise_) launch_depthwise_nhwc_batched(jobs, stream);
    launch_fill_bias_rows(biases_, stream);
    IOSTUNE_CUBLAS_CHECK(cublasSetStream(cublas, stream), context_);
    const Member& first = members_.front();
    // Column-major, as cuBLAS sees the channels-last rows: out^T [cout x pixels] =
    // W [cout x cin] (stored row-major: its transpose) x depthwise^T [cin x pixels].
    const int m = first.out.c, n = int(first.out.rows()), k = first.in.c;
    const float one = 1.0f, beta = biases_.empty() ? 0.0f : 1.0f;
    const cudaDataType_t type = cublas_data_type(first.out.dtype);
    const auto* tables = static_cast<void* const*>(tables_.get());
    const size_t count = members_.size();
    for (const Gemm& g : gemms_) {
        IOSTUNE_CUBLAS_CHECK(
            cublasGemmBatchedEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one,
                                tables + g.first, type, k, tables + count + g.first, type,
                                int(first.depthwise_out.row_stride), &beta,
                                tables + 2 * count + g.first, type, int(g.ldc), g.count,
                                cublas_compute_type(precision_), CUBLAS_GEMM_DEFAULT),
            context_);
    }
}

std::string BatchedSepConv::label() const {
    return fmt::format("batched: {} depthwise launch{}, {}{} GEMM{}", depthwise_.size(),
                       depthwise_.size() == 1 ? "" : "es", biases_.empty() ? "" : "bias fill, ",
                       gemms_.size(), gemms_.size() == 1 ? "" : "s");
}

}  // namespace iostune
