// Where a stored schedule came from, read from the search stats stored with it: the search's own
// streams, a baseline's streams on convolution kernels the search chose, or a baseline's
// schedule as a baseline replay (`replay --schedule-source NAME`, kernels chosen to run alone)
// runs it. `iostune report` shows it, so that a DB's best can be told from a baseline's.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "db/records.h"

namespace iostune::db {

enum class OriginKind {
    Search,         // the search's own streams: the DP's or asap's, or a baseline's it changed
    SearchKernels,  // a baseline's streams unchanged, on kernels chosen to co-run or moved
    Baseline,       // a baseline's schedule as it is (or kept by the search's final contest)
    Unknown,        // stored without the stats that say (rows from before they were kept)
};

struct ScheduleOrigin {
    OriginKind kind = OriginKind::Unknown;
    std::string refined_from;  // where the refinement started, e.g. "nimble (dataflow)"
    int refine_changes = -1;   // moves it kept after that start; -1: not recorded
    std::string kernels;       // how the search chose kernels: alone, corun, mixed; "": not recorded
    std::string baseline;      // kinds SearchKernels and Baseline: whose streams, e.g. "nimble
                               // (dataflow)", or the strategy the final contest kept ("greedy")
    bool final_contest = false;  // a baseline's row the final contest stored beside the search's
                                 // (on the searched row's kernels)
};

ScheduleOrigin schedule_origin(const ScheduleRecord& schedule);

// "search", "search_kernels", "baseline" or "unknown".
std::string to_string(OriginKind kind);

// The report's cell: "search: asap (dataflow) +4", "nimble (dataflow) streams, corun kernels",
// "nimble (dataflow), unchanged" (either with " (final contest)" after a contest's baseline) or
// "-".
std::string origin_label(const ScheduleOrigin& origin);

// The report's JSON object: kind, refined_from, refine_changes, conv_objective, baseline (null
// where not recorded) and final_contest.
nlohmann::json origin_json(const ScheduleOrigin& origin);

}  // namespace iostune::db
