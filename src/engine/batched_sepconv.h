// Horizontal fusion: a batched merge stage (schedule.h, MergeKind::Batched) runs its separable
// convolutions, one shape each reading its own tensor, as a few launches instead of two per op:
// the depthwise convolutions one launch per kernel size (launch_depthwise_nhwc_batched), then
// the pointwise convolutions one cuBLASLt pointer-array batched product per output row stride,
// the biases (and the ReLU after, where the members have one) in its epilogue (the fastest of
// cuBLASLt's candidates, timed here). Where cuBLASLt has no algorithm with that epilogue, the
// product adds to a bias fill (beta = 1), and a ReLU runs in place after it; where it has none at
// all, cuBLAS's batched GEMM does.
//
// Why: NASNet-A and RandWire are mostly parallel branches of small separable convolutions. Run
// on streams side by side, each launch is too small to fill the GPU and they slow each other
// (docs/search-log.md, "Where the gap to the bound goes"); a batched launch is one grid over all.
// The search measures the batched stage like any other and keeps it only where it is faster.
//
// Channels-last only (the depthwise filters are uploaded [k, k, c] for that layout); the engine
// runs a batched stage of another layout op by op.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <vector>

#include "src/engine/cublas_handle.h"
#include "src/engine/device_buffer.h"
#include "src/engine/kernels.h"
#include "src/engine/tensor_view.h"
#include "src/precision.h"

namespace iostune {

class BatchedSepConv {
public:
    struct Member {
        TensorView in, depthwise_out, out;  // depthwise_out: the op's packed scratch
        const void* depthwise_weight = nullptr;  // [k, k, in.c]
        const void* pointwise_weight = nullptr;  // [out.c, in.c]
        const void* bias = nullptr;              // out.c values, or null (then for every member)
        DepthwiseGeometry g;
        bool relu_input = false;
        bool relu_output = false;  // the same for every member
    };

    // Whether the members can run batched; `why` gets the reason if not.
    static bool supports(const std::vector<Member>& members, std::string* why);

    // Uploads the GEMMs' pointer tables and packs the biases (not inside a capture), then times
    // cuBLASLt's pointer-array candidates on `stream` with `workspace` and keeps the fastest.
    // Throws iostune::Error when supports() refuses.
    BatchedSepConv(std::vector<Member> members, Precision precision, cublasLtHandle_t lt,
                   void* workspace, size_t workspace_bytes, cudaStream_t stream,
                   std::string context);
    ~BatchedSepConv();
    BatchedSepConv(const BatchedSepConv&) = delete;
    BatchedSepConv& operator=(const BatchedSepConv&) = delete;
    BatchedSepConv(BatchedSepConv&&) = default;  // the moved-from keeps no descriptor
    BatchedSepConv& operator=(BatchedSepConv&&) = delete;

    // The launches, on `stream` (the handle is bound to it); `workspace` as given to the
    // constructor (or as large).
    void run(const CublasHandle& cublas, void* workspace, size_t workspace_bytes,
             cudaStream_t stream) const;

    const std::vector<Member>& members() const { return members_; }
    // "batched: 2 depthwise launches, bias fill, 1 cuBLASLt product" (no fill: the biases are in
    // cuBLASLt's epilogue)
    std::string label() const;
    // The pointer tables and packed biases, for the engine to keep alive while graphs captured
    // with them may run.
    DeviceBuffer take_tables() { return std::move(tables_); }
    DeviceBuffer take_biases() { return std::move(packed_bias_); }

private:
    // One batched product per output row stride: cuBLASLt's pointer-array batch, with the
    // biases in its epilogue when it has an algorithm for that, else adding to a bias fill; where
    // cuBLASLt has none at all, cuBLAS's batched GEMM after the fill.
    struct Gemm {
        int first = 0, count = 0;  // members' slots in the tables
        int64_t ldc = 0;
        cublasLtMatmulDesc_t desc = nullptr;
        cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
        // Whether cuBLASLt applies the bias and the ReLU (where there are any); false: the
        // product adds to a bias fill, and the ReLU runs after it.
        bool epilogue = false;
        std::optional<cublasLtMatmulAlgo_t> algo;
        size_t workspace = 0;
    };
    static void release(Gemm& g);
    static constexpr int kCandidates = 4;  // cuBLASLt's shortlist, each timed
    static constexpr int kTimedRuns = 5;
    std::vector<cublasLtMatmulHeuristicResult_t> describe(Gemm& g, size_t workspace_bytes);
    void choose(Gemm& g, const std::vector<cublasLtMatmulHeuristicResult_t>& candidates,
                void* workspace, size_t workspace_bytes, cudaStream_t stream);
    void run_lt(const Gemm& g, void* workspace, cudaStream_t stream) const;
    void run_blas(const Gemm& g, cublasHandle_t cublas) const;

    std::vector<Member> members_;
    Precision precision_;
    cublasLtHandle_t lt_;
    std::string context_;
    std::vector<std::vector<DepthwiseJob>> depthwise_;  // one launch per kernel size
    std::vector<BiasRows> biases_;  // for the cuBLAS fallback's fill
    std::vector<TensorView> relu_after_;  // outputs the fallback rectifies after its product
    std::vector<Gemm> gemms_;
    DeviceBuffer tables_;       // A, B and C pointers, each members_.size() long
    DeviceBuffer packed_bias_;  // the members' biases one after another, in table order
};

}  // namespace iostune
