#include "tuning/objective_trial.h"

namespace iostune {

namespace {

// The next trial, the refinement's candidates timed again, the final timings: three trials' time.
constexpr double kTrialsAhead = 3;

}  // namespace

bool another_objective_fits(double left_s, double last_trial_s) {
    return left_s >= kTrialsAhead * last_trial_s;
}

}  // namespace iostune
