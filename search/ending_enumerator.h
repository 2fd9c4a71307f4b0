// Enumerating the endings of a search state (IOS paper, section 4.1).
//
// The DP works on one part of a block at a time: at most 64 ops in topological order, so a set
// of ops is a 64-bit mask over local indices. A state S is the set of ops still to schedule (it
// is closed under predecessors); an ending S' of S is a non-empty subset with no edge from S' to
// S - S', i.e. a valid last stage for S. In a concurrent stage the groups of S' are its weakly
// connected components, each run in topological order on one stream.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "src/graph.h"

namespace iostune {

// The ops of one part as a DAG over local indices (edges to ops outside the part are dropped:
// producers outside are scheduled earlier, consumers outside later).
struct PartDag {
    std::vector<int> ops;          // global op ids, ascending; local index = position
    std::vector<uint64_t> preds;   // per local op: its producers inside the part
    std::vector<uint64_t> succs;   // per local op: its consumers inside the part
    int size() const { return int(ops.size()); }
    uint64_t all() const { return size() == 64 ? ~uint64_t(0) : (uint64_t(1) << size()) - 1; }
};

constexpr int kMaxPartOps = 64;  // bits in a state mask

// Throws iostune::Error if `ops` has more than kMaxPartOps ops.
PartDag make_part_dag(const Graph& graph, const std::vector<int>& ops);

struct EndingLimits {
    int max_group_ops = std::numeric_limits<int>::max();  // r: ops per component
    int max_groups = std::numeric_limits<int>::max();     // s: components per ending
    // Only endings whose every component is one op plus all its descendants in S (a single
    // source): the narrower family the published IOS implementation enumerates.
    bool single_source_groups = false;
};

struct Ending {
    uint64_t ops = 0;
    std::span<const uint64_t> groups;  // weakly connected components of `ops`, as masks
};

// Calls `visit` once for every ending of `state` within `limits`. Complete: no ending that
// satisfies the limits is missed. Work is proportional to (endings + 1) x ops, because the
// per-component limit is checked while an ending is built and every partial ending extends to
// at least one complete one.
void enumerate_endings(const PartDag& dag, uint64_t state, const EndingLimits& limits,
                       const std::function<void(const Ending&)>& visit);

// Weakly connected components of `ops` inside the part (masks, ordered by lowest op).
std::vector<uint64_t> components(const PartDag& dag, uint64_t ops);

// Number of states of the part (sets closed under predecessors, the empty set included),
// counting stops once it passes `cap` (returns cap + 1 then).
int64_t count_states(const PartDag& dag, int64_t cap);

}  // namespace iostune
