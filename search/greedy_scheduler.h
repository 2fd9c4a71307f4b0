// The IOS paper's "greedy" baseline (Section 7.1): every operator that can run now goes into the
// next stage, each in its own group (stream); repeat until all are scheduled. Per block.
#pragma once

#include <vector>

#include "src/blocks.h"
#include "src/schedule.h"

namespace iostune {

std::vector<Stage> greedy_block_stages(const Graph& graph, const Block& block);
Schedule greedy_schedule(const Graph& graph);

}  // namespace iostune
