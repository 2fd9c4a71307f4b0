// The CPU reference implementation (fp32, straightforward loops): the oracle the GPU engine,
// merged stages and imported models are checked against.
#pragma once

#include <vector>

#include "src/graph.h"
#include "src/tensor.h"

namespace iostune {

// Runs one op on its input tensors with the given parameters (param_shapes() layout).
HostTensor reference_op(const Op& op, const std::vector<const HostTensor*>& inputs,
                        const std::vector<ParamTensor>& params);

// Runs the whole graph (which must have weights) and returns every op's output.
std::vector<HostTensor> reference_run_all(const Graph& graph, const HostTensor& input);

// Runs the whole graph and returns its (first) output.
HostTensor reference_run(const Graph& graph, const HostTensor& input);

// A graph with several inputs or outputs (a model set): one tensor per input in, one per output
// out, in the graph's order.
std::vector<HostTensor> reference_run_outputs(const Graph& graph,
                                              const std::vector<HostTensor>& inputs);

}  // namespace iostune
