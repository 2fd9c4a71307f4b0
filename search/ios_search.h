// The IOS dynamic program (paper section 4, Algorithm 1): per block,
//   cost[S] = min over endings S' of S of ( cost[S - S'] + stage_latency[S'] ),  cost[{}] = 0,
// where S is the set of ops still to schedule and S' (the last stage) has no edge into S - S'.
// The chosen ending of each state is kept to rebuild the schedule.
//
// Stage families (what a transition may cost):
//   ios-both     every ending as a concurrent stage (groups = its weakly connected components);
//                an ending of >= 2 convolutions that pass can_merge is also costed as a merge
//                stage, and the cheaper of the two is taken.
//   ios-parallel concurrent stages only.
//   ios-merge    merge stages wherever possible, otherwise one op per stage: the endings are the
//                single sinks of S (one-op stages) and the sets of >= 2 sinks that pass can_merge
//                (merge stages), as the published dp_merge does.
// Pruning (paper section 4.3): at most r ops per group and at most s groups per stage, for
// merge candidates too (their ops are s one-op groups of the ending).
//
// Limits: states are 64-bit masks, so a block of more than 64 ops (max_part_ops) is cut into
// consecutive parts in topological order, as IOS does; a part with more than max_part_states
// states is halved until it fits (windows of the topological order: what keeps a wide block
// such as HRNet's 197 ops tractable). The parts are searched one after another; the block's
// schedule is their stages in order.
//
// Time budget: with time_budget_s > 0 the DP is anytime. A part whose search passes the
// deadline, and every part after it, is scheduled by the greedy rule instead (every ready op in
// the next stage), so a valid schedule always comes back; stats count those parts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "search/cost_model.h"
#include "search/search_stats.h"
#include "src/graph.h"
#include "src/schedule.h"

namespace iostune {

enum class SearchStrategy { IosBoth, IosParallel, IosMerge };

const char* to_string(SearchStrategy strategy);  // "ios-both", "ios-parallel", "ios-merge"
std::optional<SearchStrategy> search_strategy_from_string(const std::string& name);

struct SearchOptions {
    SearchStrategy strategy = SearchStrategy::IosBoth;
    bool prune = true;      // false: r and s unlimited (--no-prune)
    int max_group_ops = 3;  // r
    int max_groups = 8;     // s
    // Enumerate only the published implementation's endings (every group is one op plus all
    // its descendants in S), for comparison; the default enumerates every ending.
    bool reference_endings = false;
    int max_part_ops = 64;               // at most 64 (bits in a state)
    // States of one part's DP table. Each state costs its endings' stage measurements, and on a
    // GPU a measurement is about a millisecond: docs/search-log.md has the measurements behind it.
    int64_t max_part_states = 2048;
    double time_budget_s = 0;            // <= 0: none (see above)
    // At most this many distinct stages to cost (0: no bound): the part bound is halved from
    // max_part_states until a dry run of the DP counts no more (narrower windows), so a search
    // whose stages are measured fits its time instead of running out of it.
    int64_t max_stages = 0;
    // A part holding ops of several models of a set: its states are the product of the
    // members', and each state has endings across all of them, so it is halved (per member)
    // much sooner (docs/model-sets.md has the trade-off: stages to measure against quality).
    int64_t max_set_part_states = 128;
    bool progress = true;                // progress bar on stderr (only if it is a terminal)
};

struct SearchResult {
    Schedule schedule;
    int64_t part_states = 0;  // the part bound the search ran with (max_stages may lower it)
    double latency_ms = 0;  // predicted: sum of the chosen stages' costs
    SearchStats stats;
};

// Throws iostune::Error on bad options, or when the cost model fails on every way to schedule
// some part (no usable schedule exists).
SearchResult ios_search(const Graph& graph, CostModel& model, const SearchOptions& options = {});

}  // namespace iostune
