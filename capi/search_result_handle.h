// iostune_search_result: what one tuning job stored, as the C API's getters and the JSON that
// `iostune search --format json` prints.
#pragma once

#include <cstdint>
#include <string>

struct iostune_search_result {
    std::int64_t schedule_id = 0;  // the stored best: the schedule replay will run
    double latency_ms = 0;         // that schedule's: measured, or the simulated estimate
    std::string strategy;          // that schedule's
    bool simulated = false;
    std::string json;
};
