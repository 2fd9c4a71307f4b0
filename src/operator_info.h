// Static facts about an op in its graph: parameter layout, FLOPs, bytes moved.
// These feed model summaries, the simulated cost model and the profiler's compute- vs
// memory-bound classification.
#pragma once

#include <cstdint>
#include <vector>

#include "src/graph.h"

namespace iostune {

// Dims of each parameter tensor of the op, in order:
//   Conv:    weight [Cout, Cin/groups, kh, kw], bias [Cout] (if bias), slope [Cout] (if prelu)
//   SepConv: depthwise [Cin, 1, k, k], pointwise [Cout, Cin, 1, 1], bias [Cout] (if bias)
//   Linear:  weight [out, Cin*H*W], bias [out] (if bias)
//   ConvTranspose: weight [Cin, Cout/groups, kh, kw], bias [Cout] (if bias)
//   ChannelAffine: scale [C], shift [C]
//   ChannelNorm, GroupNorm: gamma [C], beta [C]
//   PRelu:   slope [C]
//   others:  none
std::vector<std::vector<int>> param_shapes(const Graph& graph, int op_id);

int64_t param_count(const Graph& graph, int op_id);
// Floating-point operations (a multiply-add counts as 2) at the graph's batch size.
int64_t flops(const Graph& graph, int op_id);
// Per element of an activation (an Activation op, or one fused into a convolution).
int64_t activation_flops(const ActivationAttrs& a);
// Minimum bytes moved through device memory: each input read once, parameters read once,
// output written once, each element `element_bytes` wide (4: fp32; 2: fp16/bf16 storage); a
// residual convolution's z is one of its inputs.
int64_t bytes_moved(const Graph& graph, int op_id, int element_bytes = 4);

struct GraphTotals {
    int64_t flops = 0;
    int64_t params = 0;
    int64_t bytes = 0;  // in fp32
};
GraphTotals totals(const Graph& graph);

}  // namespace iostune
