// The perturbed replay's delays (src/engine/perturbation.h): which launches of a schedule get a
// spin kernel before them, decided on the CPU.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <set>

#include "search/baselines.h"
#include "src/engine/perturbation.h"
#include "src/schedule.h"
#include "src/stream_program.h"
#include "src/zoo/zoo.h"

using namespace iostune;

TEST_CASE("perturbation: even rounds delay one lane, odd rounds several, deterministically",
          "[perturb]") {
    const Graph g = build_zoo_model("googlenet", 1);
    const StreamProgram program(g, with_form(make_baseline("nimble", g), ScheduleForm::Dataflow));
    REQUIRE(program.lane_count() >= 3);
    int odd_rounds_with_several = 0;
    for (int round = 0; round < 20; ++round) {
        Perturbation p;
        p.seed = 5;
        p.round = round;
        std::string described;
        const std::vector<uint64_t> delays = perturbation_delays(program, p, &described);
        REQUIRE(delays.size() == program.launches().size());
        CHECK(delays == perturbation_delays(program, p));  // the same for the same seed and round
        std::set<int> lanes;
        for (size_t i = 0; i < delays.size(); ++i) {
            if (delays[i] == 0) continue;
            lanes.insert(program.launches()[i].lane);
            CHECK(delays[i] >= 1000);
            CHECK(delays[i] <= uint64_t(p.max_delay_us * 1e3));
        }
        CHECK_FALSE(lanes.empty());
        if (round % 2 == 0) CHECK(lanes.size() == 1);
        else odd_rounds_with_several += lanes.size() > 1;
        CHECK_THAT(described, Catch::Contains(fmt::format("round {}", round)));
    }
    CHECK(odd_rounds_with_several >= 5);
    Perturbation other;
    other.seed = 6;
    Perturbation same;
    same.seed = 5;
    CHECK(perturbation_delays(program, other) != perturbation_delays(program, same));
}
