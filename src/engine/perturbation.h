// Perturbed launches, for the concurrency check (`iostune replay --validate --perturb N`): a
// short spin kernel before chosen launches of a schedule shifts each lane's timing, so two ops
// the schedule leaves unordered meet in other orders than the natural one. A schedule whose
// dependencies are complete computes the same bits however its lanes are delayed; a missing
// event or a buffer two concurrent ops share shows as a different output. Never part of a
// production launch: only Engine::capture_perturbed() uses it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/stream_program.h"

namespace iostune {

struct Perturbation {
    uint64_t seed = 1;
    // Round r of a check delays one lane when r is even, about half of the lanes when odd.
    int round = 0;
    double max_delay_us = 30;      // each delay is uniform in [1, max_delay_us]
    double launch_share = 0.3;     // of the chosen lanes' launches, the share delayed
    // For the check's own test: drop every cross-lane wait, so the schedule races and the check
    // must see it. Never set outside tests.
    bool drop_waits = false;
};

// Nanoseconds of spin before each launch of `program` (0: none), deterministic for the seed
// and round; `described` gets a line naming the delayed lanes and how many launches.
std::vector<uint64_t> perturbation_delays(const StreamProgram& program, const Perturbation& p,
                                          std::string* described = nullptr);

}  // namespace iostune
