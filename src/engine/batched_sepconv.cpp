#include "src/engine/batched_sepconv.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <utility>

#include "src/engine/cuda_check.h"
#include "src/engine/cuda_event.h"
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
        if (m.relu_output != first.relu_output)
            return refuse(why, "members with and without a ReLU after them");
        if (m.out.row_stride > INT_MAX || m.in.row_stride > INT_MAX || m.out.rows() > INT_MAX)
            return refuse(why, "views beyond cuBLAS's 32-bit sizes");
    }
    return true;
}

BatchedSepConv::BatchedSepConv(std::vector<Member> members, Precision precision,
                               cublasLtHandle_t lt, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream, std::string context)
    : members_(std::move(members)), precision_(precision), lt_(lt), context_(std::move(context)) {
    std::string why;
    if (!supports(members_, &why))
        throw Error(fmt::format("{}: cannot run batched: {}", context_, why));
    std::map<int, std::vector<DepthwiseJob>> by_kernel;
    std::map<int64_t, std::vector<int>> by_ldc;
    for (size_t k = 0; k < members_.size(); ++k) {
        const Member& m = members_[k];
        by_kernel[m.g.kernel_h].push_back({m.in, m.depthwise_out, m.depthwise_weight, m.g,
                                           m.relu_input});
        by_ldc[m.out.row_stride].push_back(int(k));
    }
    for (auto& [kernel, jobs] : by_kernel) depthwise_.push_back(std::move(jobs));
    // Tables: A (weights), B (depthwise results), C (outputs), members grouped by ldc; the
    // biases packed in the same order (cuBLASLt's epilogue steps through them by a stride).
    const size_t n = members_.size();
    const Member& first = members_.front();
    const size_t bias_bytes = size_t(first.out.c) * size_t(first.out.element_bytes());
    std::vector<const void*> table(3 * n);
    if (first.bias) packed_bias_ = DeviceBuffer(n * bias_bytes);
    int slot = 0;
    for (const auto& [ldc, ids] : by_ldc) {
        Gemm g;
        g.first = slot;
        g.count = int(ids.size());
        g.ldc = ldc;
        for (int k : ids) {
            const Member& m = members_[size_t(k)];
            table[size_t(slot)] = m.pointwise_weight;
            table[n + size_t(slot)] = m.depthwise_out.data;
            table[2 * n + size_t(slot)] = m.out.data;
            if (m.bias)
                IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(packed_bias_.get()) +
                                                       size_t(slot) * bias_bytes,
                                                   m.bias, bias_bytes, cudaMemcpyDeviceToDevice,
                                                   stream),
                                   context_ + ": packing the pointwise biases");
            ++slot;
        }
        gemms_.push_back(g);
    }
    tables_ = DeviceBuffer(table.size() * sizeof(void*));
    IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(tables_.get(), table.data(), tables_.bytes(),
                                       cudaMemcpyHostToDevice, stream),
                       context_ + ": uploading the batched GEMM's pointer tables");
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), context_);  // `table` is about to go
    size_t index = 0;
    for (const auto& [ldc, ids] : by_ldc) {
        Gemm& g = gemms_[index++];
        // The biases and the ReLU in cuBLASLt's epilogue if it has an algorithm for that, else
        // the product adds to a bias fill (beta = 1), by cuBLASLt or else by cuBLAS, and the
        // ReLU runs after it.
        g.epilogue = first.bias != nullptr || first.relu_output;
        choose(g, describe(g, workspace_bytes), workspace, workspace_bytes, stream);
        if (!g.algo && g.epilogue) {
            release(g);
            g.epilogue = false;
            choose(g, describe(g, workspace_bytes), workspace, workspace_bytes, stream);
        }
        if (g.epilogue) continue;
        for (int k : ids) {
            const Member& m = members_[size_t(k)];
            if (m.bias) biases_.push_back({m.out, m.bias});
            if (m.relu_output) relu_after_.push_back(m.out);
        }
    }
}

BatchedSepConv::~BatchedSepConv() {
    for (Gemm& g : gemms_) release(g);
}

void BatchedSepConv::release(Gemm& g) {
    for (cublasLtMatrixLayout_t* layout : {&g.a, &g.b, &g.d})
        if (*layout != nullptr) cublasLtMatrixLayoutDestroy(std::exchange(*layout, nullptr));
    if (g.desc != nullptr) cublasLtMatmulDescDestroy(std::exchange(g.desc, nullptr));
}

// Column-major, as cuBLAS sees the channels-last rows: out^T [cout x pixels] = W [cout x cin]
// (stored row-major: its transpose) x depthwise^T [cin x pixels], per member.
std::vector<cublasLtMatmulHeuristicResult_t> BatchedSepConv::describe(Gemm& g,
                                                                      size_t workspace_bytes) {
    const Member& first = members_.front();
    const cudaDataType_t type = cublas_data_type(first.out.dtype);
    const std::string what = context_ + " (cuBLASLt pointer-array batch)";
    IOSTUNE_CUBLAS_CHECK(
        cublasLtMatmulDescCreate(&g.desc, cublas_compute_type(precision_), CUDA_R_32F), what);
    const auto set_desc = [&](cublasLtMatmulDescAttributes_t attribute, const void* value,
                              size_t size) {
        IOSTUNE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g.desc, attribute, value, size), what);
    };
    const cublasOperation_t transpose = CUBLAS_OP_T;
    set_desc(CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose));
    if (g.epilogue) {
        const bool relu = first.relu_output;
        const cublasLtEpilogue_t epilogue =
            first.bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                       : CUBLASLT_EPILOGUE_RELU;
        set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
        if (first.bias) {
            const void* bias = static_cast<const char*>(packed_bias_.get()) +
                               size_t(g.first) * size_t(first.out.c) *
                                   size_t(first.out.element_bytes());
            const int64_t stride = first.out.c;
            set_desc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
            set_desc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type));
            set_desc(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &stride, sizeof(stride));
        }
    }
    const auto layout = [&](cublasLtMatrixLayout_t& l, uint64_t rows, uint64_t cols, int64_t ld) {
        IOSTUNE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), what);
        const int32_t count = g.count;
        const uint32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
        IOSTUNE_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                              &count, sizeof(count)),
                             what);
        IOSTUNE_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE,
                                                              &mode, sizeof(mode)),
                             what);
    };
    layout(g.a, uint64_t(first.in.c), uint64_t(first.out.c), first.in.c);
    layout(g.b, uint64_t(first.in.c), uint64_t(first.out.rows()), first.depthwise_out.row_stride);
    layout(g.d, uint64_t(first.out.c), uint64_t(first.out.rows()), g.ldc);
    // The matrices' alignment: the least of the members' of this product.
    uint32_t align_a = 256, align_b = 256, align_d = 256;
    for (const Member& m : members_) {
        if (m.out.row_stride != g.ldc) continue;
        align_a = std::min(align_a, byte_alignment(m.pointwise_weight, 256));
        align_b = std::min(align_b, byte_alignment(m.depthwise_out.data, 256));
        align_d = std::min(align_d, byte_alignment(m.out.data, 256));
    }
    // None for the pointer-array batch is no error: cuBLAS's batched GEMM runs it.
    return lt_shortlist(lt_, g.desc, g.a, g.b, g.d, g.d, workspace_bytes,
                        {align_a, align_b, align_d, align_d}, kCandidates, what);
}

// The fastest candidate over a few launches each (whatever the buffers hold: only time counts).
void BatchedSepConv::choose(Gemm& g,
                            const std::vector<cublasLtMatmulHeuristicResult_t>& candidates,
                            void* workspace, size_t workspace_bytes, cudaStream_t stream) {
    const CudaEvent start(CudaEvent::Timing::Enabled), stop(CudaEvent::Timing::Enabled);
    std::optional<float> best_ms;
    cublasLtMatmulHeuristicResult_t best{};
    for (const cublasLtMatmulHeuristicResult_t& c : candidates) {
        if (c.workspaceSize > workspace_bytes) continue;
        g.algo = c.algo;
        g.workspace = c.workspaceSize;
        run_lt(g, workspace, stream);  // warm-up
        start.record(stream);
        for (int rep = 0; rep < kTimedRuns; ++rep) run_lt(g, workspace, stream);
        stop.record(stream);
        stop.synchronize();
        const float ms = stop.elapsed_ms_since(start);
        if (!best_ms || ms < *best_ms) best_ms = ms, best = c;
    }
    g.algo.reset();
    if (best_ms) g.algo = best.algo, g.workspace = best.workspaceSize;
}

void BatchedSepConv::run_lt(const Gemm& g, void* workspace, cudaStream_t stream) const {
    // Without the bias in the epilogue the product adds to the bias fill (C = D).
    const float one = 1.0f, beta = members_.front().bias && !g.epilogue ? 1.0f : 0.0f;
    void** tables = static_cast<void**>(tables_.get());  // device arrays of pointers
    const size_t n = members_.size();
    IOSTUNE_CUBLAS_CHECK(cublasLtMatmul(lt_, g.desc, &one, tables + g.first, g.a,
                                        tables + n + g.first, g.b, &beta, tables + 2 * n + g.first,
                                        g.d, tables + 2 * n + g.first, g.d, &*g.algo, workspace,
                                        g.workspace, stream),
                         context_);
}

void BatchedSepConv::run_blas(const Gemm& g, cublasHandle_t cublas) const {
    const Member& first = members_.front();
    const int m = first.out.c, n = int(first.out.rows()), k = first.in.c;
    const float one = 1.0f, beta = first.bias ? 1.0f : 0.0f;  // the bias fill is C
    const cudaDataType_t type = cublas_data_type(first.out.dtype);
    const auto* tables = static_cast<void* const*>(tables_.get());
    const size_t count = members_.size();
    IOSTUNE_CUBLAS_CHECK(
        cublasGemmBatchedEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, tables + g.first,
                            type, k, tables + count + g.first, type,
                            int(first.depthwise_out.row_stride), &beta,
                            tables + 2 * count + g.first, type, int(g.ldc), g.count,
                            cublas_compute_type(precision_), CUBLAS_GEMM_DEFAULT),
        context_);
}

void BatchedSepConv::run(const CublasHandle& cublas, void* workspace, size_t workspace_bytes,
                         cudaStream_t stream) const {
    for (const auto& jobs : depthwise_) launch_depthwise_nhwc_batched(jobs, stream);
    launch_fill_bias_rows(biases_, stream);
    cublas.set_stream(stream);
    for (const Gemm& g : gemms_) {
        if (!g.algo) {
            run_blas(g, cublas.get());
            continue;
        }
        if (g.workspace > workspace_bytes)
            throw InternalError(fmt::format("{}: its product needs {} bytes of workspace, given {}",
                                            context_, g.workspace, workspace_bytes));
        run_lt(g, workspace, stream);
    }
    for (const TensorView& out : relu_after_) launch_bias_activation(out, nullptr, true, stream);
}

std::string BatchedSepConv::label() const {
    std::vector<std::string> parts{fmt::format("{} depthwise launch{}", depthwise_.size(),
                                               depthwise_.size() == 1 ? "" : "es")};
    if (!biases_.empty()) parts.push_back("bias fill");
    if (!relu_after_.empty()) parts.push_back("ReLU after");
    int lt = 0;
    for (const Gemm& g : gemms_) lt += g.algo ? 1 : 0;
    const int blas = int(gemms_.size()) - lt;
    if (lt > 0) parts.push_back(fmt::format("{} cuBLASLt product{}", lt, lt == 1 ? "" : "s"));
    if (blas > 0) parts.push_back(fmt::format("{} cuBLAS GEMM{}", blas, blas == 1 ? "" : "s"));
    return fmt::format("batched: {}", fmt::join(parts, ", "));
}

}  // namespace iostune
