// Wall-clock seconds for the statistics every search, cost model and tuning job reports.
#pragma once

#include <chrono>

namespace iostune {

using SteadyClock = std::chrono::steady_clock;

inline double seconds_since(SteadyClock::time_point start) {
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// Adds the seconds from its construction to its end of scope to `total`, on every way out of
// that scope (a return, a continue, an exception).
class SecondsAdder {
public:
    explicit SecondsAdder(double& total) : total_(total) {}
    ~SecondsAdder() { total_ += seconds_since(start_); }
    SecondsAdder(const SecondsAdder&) = delete;
    SecondsAdder& operator=(const SecondsAdder&) = delete;

private:
    double& total_;
    SteadyClock::time_point start_ = SteadyClock::now();
};

}  // namespace iostune
