#include "src/engine/perturbation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace iostune {

namespace {

uint64_t next(uint64_t& state) {  // splitmix64: the same delays for a seed on every machine
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double unit(uint64_t& state) { return double(next(state) >> 11) * 0x1.0p-53; }

}  // namespace

std::vector<uint64_t> perturbation_delays(const StreamProgram& program, const Perturbation& p,
                                          std::string* described) {
    uint64_t state = p.seed * 0x100000001b3ULL + uint64_t(p.round);
    const int lanes = std::max(1, program.lane_count());
    std::vector<int> chosen;
    if (p.round % 2 == 0) {
        chosen.push_back(int(next(state) % uint64_t(lanes)));
    } else {
        for (int lane = 0; lane < lanes; ++lane)
            if (unit(state) < 0.5) chosen.push_back(lane);
        if (chosen.empty()) chosen.push_back(int(next(state) % uint64_t(lanes)));
    }
    std::vector<uint64_t> delays(program.launches().size(), 0);
    int delayed = 0;
    for (size_t i = 0; i < delays.size(); ++i) {
        const int lane = program.launches()[i].lane;
        if (std::find(chosen.begin(), chosen.end(), lane) == chosen.end()) continue;
        if (unit(state) >= p.launch_share) continue;
        const double us = 1 + unit(state) * std::max(0.0, p.max_delay_us - 1);
        delays[i] = uint64_t(us * 1e3);
        ++delayed;
    }
    if (described)
        *described = fmt::format("round {}: lane{} {} delayed before {} of their launches (up to "
                                 "{:.0f} us each)",
                                 p.round, chosen.size() > 1 ? "s" : "", fmt::join(chosen, ","),
                                 delayed, p.max_delay_us);
    return delays;
}

}  // namespace iostune
