// Wall-clock seconds for the statistics every search, cost model and tuning job reports.
#pragma once

#include <chrono>

namespace iostune {

using SteadyClock = std::chrono::steady_clock;

inline double seconds_since(SteadyClock::time_point start) {
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace iostune
