// Priority levels (Schedule::priorities) from each op's slack: how much later than it can, an op
// may start without delaying the end of the graph, with each op taking its isolated time and
// only data dependencies ordering them. Ops on or near the critical path get the higher levels,
// so that when kernels compete for SMs the GPU serves first those the graph's end waits for
// (docs/search.md, "Critical ops first").
#pragma once

#include <vector>

#include "src/graph.h"

namespace iostune {

// Per op, its slack in ms (latest start - earliest start) given `op_ms` (one time per op).
std::vector<double> op_slack_ms(const Graph& graph, const std::vector<double>& op_ms);

// Per op, the number of `slack_fractions` f (each in (0, 1], at most kMaxPriority of them) with
// slack <= f x the critical path's length: {0.02} gives level 1 to the ops within 2% of the
// critical path, {0.25, 0.1, 0.02} grades them in three levels. Throws iostune::Error on sizes
// or fractions that do not fit.
std::vector<int> critical_priorities(const Graph& graph, const std::vector<double>& op_ms,
                                     const std::vector<double>& slack_fractions);

}  // namespace iostune
