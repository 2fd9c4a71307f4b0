// The baseline schedules iostune compares IOS against, all on the same engine:
//   sequential  one op per stage, in topological order
//   greedy      IOS paper's greedy: all ready ops in the next stage (greedy_scheduler.h)
//   nimble      Nimble's stream assignment (nimble_scheduler.h)
//   opara       Opara's stream allocation + launch order (opara_scheduler.h)
//   streams     a model set's models each on its own stream (model_set_baselines.h)
#pragma once

#include <string>
#include <vector>

#include "search/op_resources.h"
#include "src/schedule.h"

namespace iostune {

// The baselines of any graph; "streams" (model sets only) is made by make_baseline too.
std::vector<std::string> baseline_names();

// The named baseline's schedule. `resources` feeds Opara; without it (nullptr) Opara uses the
// analytic estimates for an H100. Throws iostune::Error for an unknown name or a resource table
// that does not cover the graph.
Schedule make_baseline(const std::string& name, const Graph& graph,
                       const OpResourceTable* resources = nullptr);

}  // namespace iostune
