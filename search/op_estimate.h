// Analytic estimate of the kernels an op launches and how long they take on a device profile.
//
// Each op becomes one or more kernels, each a grid of identical thread blocks with a padded
// amount of work per block (a convolution is an implicit GEMM over 16..64-wide tiles, so an
// output channel count of 65 costs the same per block as 128). A kernel's time is that of its
// busiest SM: the blocks each SM works through, at the SM's share of the peak (less when too few
// warps are resident to hide latency), bounded below by the whole kernel's DRAM traffic. Because
// per-block work and blocks per SM never shrink when an op grows, more work is never faster.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/device_profile.h"
#include "search/op_resources.h"
#include "src/graph.h"
#include "src/precision.h"

namespace iostune {

struct KernelEstimate {
    std::string what;  // "gemm", "direct", "elementwise", "reduce"
    int64_t blocks = 0;
    int threads = 0;
    int registers_per_thread = 0;
    int shared_mem_bytes = 0;
    double block_flops = 0.0;  // work of one thread block, padded to its tile
    double block_bytes = 0.0;  // bytes one thread block reads and writes
    double flops = 0.0;        // useful FLOPs of the whole kernel
    double bytes = 0.0;        // compulsory DRAM bytes of the whole kernel
    bool gemm = false;         // runs at the precision's GEMM peak (tensor cores but in fp32)
};

struct KernelTiming {
    double time_s = 0.0;          // execution + launch
    double compute_s = 0.0;       // execution bound by arithmetic
    double memory_s = 0.0;        // execution bound by memory traffic
    double machine_flops_s = 0.0;  // the kernel's FLOPs at the whole machine's peak
    double machine_bytes_s = 0.0;  // its bytes at the whole machine's bandwidth
    int resident_blocks_per_sm = 0;
    double occupancy = 0.0;
    bool compute_bound = false;
};

// The kernels op `op_id` launches, in order.
std::vector<KernelEstimate> op_kernels(const Graph& graph, int op_id);

// The one convolution an operator-merge stage runs: the convs' output channels stacked, kernels
// zero-padded to the largest. The ops must be mergeable (see can_merge()).
KernelEstimate merged_conv_kernel(const Graph& graph, const std::vector<int>& conv_ids);

// The kernels a batched merge stage launches (MergeKind::Batched, SepConvs of one shape): each
// phase of the members (pre-ReLU, depthwise, pointwise) as one kernel over all their blocks.
std::vector<KernelEstimate> batched_sepconv_kernels(const Graph& graph, const std::vector<int>& ids);

// The kernel's time in a precision: GEMMs at its tensor-core (or FMA) peak, bytes at its element
// size (estimates count fp32 elements).
KernelTiming time_kernel(const KernelEstimate& kernel, const DeviceProfile& device,
                         Precision precision);

// Estimated resource demand of one op / of every op of the graph (source "sim:<device>").
OpResources estimate_op_resources(const Graph& graph, int op_id, const DeviceProfile& device,
                                  Precision precision);
OpResourceTable estimate_resource_table(const Graph& graph, const DeviceProfile& device,
                                        Precision precision);

}  // namespace iostune
