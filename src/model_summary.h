// The at-a-glance facts about a model that `iostune models` and `iostune show` print: size,
// block structure (what bounds the search), compute, parameters and identity.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/graph.h"

namespace iostune {

struct ModelSummary {
    std::string name;
    Shape input;  // n is the batch the figures below are for
    int ops = 0;
    std::vector<std::pair<OpKind, int>> ops_by_kind;  // kinds present, in OpKind order
    int blocks = 0;
    // The block with the largest schedule space: the widest (then, on a tie, the one with the
    // most ops), with its n and d. Width dominates the IOS search's cost (the paper's bound is
    // C(n/d+2, 2)^d), which is why the paper's Table 1 names Inception-E (n = 11, d = 6) as
    // Inception V3's largest block although Inception-C has 12 ops at width 4.
    int largest_block_ops = 0;
    int largest_block_width = 0;
    double gflops = 0;  // at input.n
    int64_t params = 0;
    std::string fingerprint;
    WeightsState weights = WeightsState::Absent;
};

ModelSummary summarize(const Graph& graph);

}  // namespace iostune
