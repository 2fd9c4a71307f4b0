// What a search did, per block and in total: the size of the space it explored and the work it
// took (IOS paper, Table 1), printable as an aligned table or as JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace iostune {

struct BlockSearchStats {
    int block = 0;
    int parts = 1;            // >1 when the block was split to fit the DP's limits
    int parts_out_of_time = 0;  // parts given the greedy rule's stages: the time budget ran out
    int ops = 0;
    int width = 0;            // largest antichain of the block
    int64_t states = 0;       // sets of ops still to schedule, the empty set included
    int64_t transitions = 0;  // (state, ending) pairs the DP considered
    // Distinct schedules of the space searched (the strategy's stage family under the active
    // pruning; a merge-able ending in ios-both counts twice). Exact below 2^53.
    double schedules = 1;
    int64_t stages_costed = 0;  // distinct stages handed to the cost model
    int64_t cache_hits = 0;     // stage costs found in the search's cache
    int64_t stages_failed = 0;  // stages the cost model could not run (unusable endings)
    double latency_ms = 0;      // predicted latency of the block's chosen stages
    double wall_s = 0;
};

struct SearchStats {
    std::vector<BlockSearchStats> blocks;
    // Sums, except width (max) and schedules (product: blocks are chosen independently).
    BlockSearchStats totals() const;
};

// An aligned text table, one row per block plus a total row.
std::string format_stats_table(const SearchStats& stats);
// {"blocks": [{block, parts, ops, width, states, transitions, schedules, ...}], "totals": {...}}
nlohmann::json stats_to_json(const SearchStats& stats);
// A schedule count as text: exact digits below 2^53, otherwise scientific notation.
std::string format_count(double count);

}  // namespace iostune
