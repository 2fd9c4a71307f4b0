// Convolution kernels chosen by where each op runs in a schedule. An engine takes one objective
// for all its convolutions (src/conv_choices.h): kernels chosen to run alone are the fastest on
// an idle GPU but often fill every SM, those chosen to co-run leave room beside them and cost a
// lone op up to 4% (call67, docs/search.md). A schedule has both kinds of op: one that runs
// with nothing beside it wants the first, one beside others the second. The search builds an
// engine pinned to this mix and keeps it where it times faster (tuning_job.cpp).
#pragma once

#include <set>
#include <vector>

#include "src/conv_choices.h"
#include "src/engine/engine.h"
#include "src/schedule.h"

namespace iostune {

// The ops of stages with one group: in either form they run with nothing of their stage
// beside them (in dataflow form only the data orders stages, so this is a guess the timing
// checks).
std::set<int> ops_run_alone(const Schedule& schedule);

// Each convolution signature of `plans`: the `alone` choice where every op holding it runs alone
// in `schedule`, else the `corun` one; a signature of no op (a merged convolution's) or missing
// from the kind it wants keeps `current`'s.
ConvChoices choices_by_concurrency(const Schedule& schedule, const std::vector<OpPlan>& plans,
                                   const ConvChoices& alone, const ConvChoices& corun,
                                   const ConvChoices& current);

}  // namespace iostune
