// A schedule as a Graphviz diagram: one cluster per stage (in execution order), ops coloured by
// their group inside it (each group is one CUDA stream), data edges between ops.
#pragma once

#include <string>

#include "src/graph.h"
#include "src/schedule.h"

namespace iostune {

// `title` labels the diagram (e.g. "inception_v3, schedule #3"). Render with `dot -Tsvg`.
std::string schedule_to_dot(const Graph& graph, const Schedule& schedule, const std::string& title);

}  // namespace iostune
