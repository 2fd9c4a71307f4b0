#include "tuning/objective_trial.h"

namespace iostune {

namespace {

// Four trials' time: the next trial, which may cost more than the last (NASNet-A b16 set up its
// co-run engine in 3.8 s, its alone one in 1.2), the output checks and the refinement's first
// round (every candidate captured and timed again), and the final timings. Three were too few:
// NASNet-A b16 tried the co-run objective with 15.7 s left after a 4.9 s trial and its search
// took 61.3 s of its 60 (calls 121-122 rerun, 2026-11-28, binary 0c357f1).
constexpr double kTrialsAhead = 4;

}  // namespace

bool another_objective_fits(double left_s, double last_trial_s) {
    return left_s >= kTrialsAhead * last_trial_s;
}

}  // namespace iostune
