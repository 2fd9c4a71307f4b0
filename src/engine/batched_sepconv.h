// Horizontal fusion: a batched merge stage (schedule.h, MergeKind::Batched) runs its separable
// convolutions, one shape each reading its own tensor, as a few launches instead of two per op:
// the depthwise convolutions one launch per kernel size (launch_depthwise_nhwc_batched), the
// pointwise biases one fill, and the pointwise convolutions one cuBLAS batched GEMM per output
// row stride, each product added to its bias (beta = 1).
//
// Why: NASNet-A and RandWire are mostly parallel branches of small separable convolutions. Run
// on streams side by side, each launch is too small to fill the GPU and they slow each other
// (docs/search.md, "Where the gap to the bound goes"); a batched launch is one grid over all.
// The search measures the batched stage like any other and keeps it only where it is faster.
//
// Channels-last only (the depthwise filters are uploaded [k, k, c] for that layout); the engine
// runs a batched stage of another layout op by op.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

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
    };

    // Whether the members can run batched; `why` gets the reason if not.
    static bool supports(const std::vector<Member>& members, std::string* why);

    // Uploads the GEMMs' pointer tables (not inside a capture). Throws iostune::Error when
    // supports() refuses.
    BatchedSepConv(std::vector<Member> members, Precision precision, std::string context);

    // The launches, on `stream` (cuBLAS's handle is bound to it here).
    void run(cublasHandle_t cublas, cudaStream_t stream) const;

    const std::vector<Member>& members() const { return members_; }
    // "batched: 2 depthwise launches, bias fill, 1 GEMM"
    std::string label() const;
    // The pointer tables, for the engine to keep alive while graphs captured with them may run.
    DeviceBuffer take_tables() { return std::move(tables_); }

private:
    struct Gemm {
        int first = 0, count = 0;  // members' slots in the tables
        int64_t ldc = 0;
    };
    std::vector<Member> members_;
    Precision precision_;
    std::string context_;
    std::vector<std::vector<DepthwiseJob>> depthwise_;  // one launch per kernel size
    std::vector<BiasRows> biases_;
    std::vector<Gemm> gemms_;
    DeviceBuffer tables_;  // A, B and C pointers, each members_.size() long
};

}  // namespace iostune
