// What `iostune replay --validate` checks: every output of a replay (every output of every
// model: a detector backbone's FPN levels, each model of a model set) against the sequential
// schedule of its own model run alone on a separate engine, in the same precision and layout
// with the replay's own convolution choices, so only the schedule differs. Each output must
// agree within output_agreement()'s tolerance.
#pragma once

#include <vector>

#include "iostune/replay.h"
#include "src/engine/engine.h"
#include "src/graph.h"
#include "src/precision.h"
#include "src/tensor.h"

namespace iostune {

struct ReplayValidation {
    int outputs = 0;          // outputs compared
    int closest = 0;          // the output nearest its tolerance (largest diff / tolerance)
    double max_abs_diff = 0;  // of that output
    double tolerance = 0;     // of that output
};

// `replayed` and `sequential` hold the graph's outputs in its order. Throws iostune::Error
// naming the first output that disagrees (describe_output(): its index, its op's name and, in
// a set, its model).
ReplayValidation compare_with_sequential(const Graph& graph,
                                         const std::vector<HostTensor>& replayed,
                                         const std::vector<HostTensor>& sequential,
                                         Precision precision);

// Every model of `graph` (a set's members, each on the input it reads) run alone with the
// sequential schedule on its own engine: the graph's outputs in its order.
std::vector<HostTensor> sequential_outputs(const Graph& graph,
                                           const std::vector<HostTensor>& inputs,
                                           const EngineOptions& options);

// Runs `replayer` once on seeded inputs (input k: random_input(shape, 11 + k)) and compares
// every output with sequential_outputs() of `graph`, the models the Replayer was built from
// (load_models() of the same specs, batch and input sharing). Throws as compare_with_sequential,
// or when the Replayer was built with native_io (its outputs are not float NCHW).
ReplayValidation validate_replay(Replayer& replayer, const Graph& graph);

}  // namespace iostune
