// The search's end-to-end phase tries each convolution objective (--conv-objective auto: kernels
// chosen to run alone, then chosen to co-run) by building an engine and timing every refinement
// candidate on it; the faster engine is kept. A trial is optional work: the refinement and the
// final timings come after it whatever it finds. At batch 16 a trial costs seconds: NASNet-A's
// in call122 set up its engines in 1.6 and 4.1 s and timed 10 candidates on each, about 5 s at
// its refinement's rate (8 in 3.9 s); with about 21 s of a 60 s budget left, both trials, the
// refinement and the final timings ran the search to 65.3 s.
#pragma once

namespace iostune {

// Whether another objective's trial fits in `left_s` seconds of the budget, the last trial
// having taken `last_trial_s`: that trial, then the output checks and the refinement's first
// round (which time the same candidates again) and the final timings must fit, four trials'
// time in all (objective_trial.cpp says why four). True without a
// budget (left_s infinite) and before any trial (last_trial_s 0).
bool another_objective_fits(double left_s, double last_trial_s);

}  // namespace iostune
