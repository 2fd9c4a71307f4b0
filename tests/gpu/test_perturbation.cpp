// [gpu] Perturbed replay (src/engine/perturbation.h): seeded delays on a concurrent schedule's
// lanes change no output bit, and the check is able to see a race: with the schedule's
// cross-lane waits dropped, some round's output differs.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "search/baselines.h"
#include "src/engine/engine.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/engine_fixtures.h"
#include "tests/search/merged_schedules.h"

using namespace iostune;
using namespace iostune::test;

namespace {

bool same_bits(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b) {
    for (size_t k = 0; k < a.size(); ++k)
        if (a[k].data.size() != b[k].data.size() ||
            std::memcmp(a[k].data.data(), b[k].data.data(), a[k].data.size() * sizeof(float)) != 0)
            return false;
    return true;
}

// Rounds (of `rounds`) whose perturbed graph gave other bits than the unperturbed one.
int differing_rounds(Engine& engine, const Schedule& schedule, int rounds, bool drop_waits) {
    const CudaGraphExec plain = engine.capture(schedule);
    engine.refill_arena(1);
    plain.launch(engine.origin_stream());
    const std::vector<HostTensor> reference = engine.read_outputs();
    int differing = 0;
    for (int r = 0; r < rounds; ++r) {
        Perturbation p;
        p.seed = 3;
        p.round = r;
        p.drop_waits = drop_waits;
        const CudaGraphExec perturbed = engine.capture_perturbed(schedule, p);
        engine.refill_arena(2 + uint64_t(r));
        perturbed.launch(engine.origin_stream());
        differing += !same_bits(engine.read_outputs(), reference);
    }
    return differing;
}

}  // namespace

TEST_CASE("perturbed replay: seeded delays on the lanes change no output bit", "[gpu][perturb]") {
    const std::string model = GENERATE(as<std::string>{}, "googlenet", "inception_v3");
    const Plan plan = GENERATE(Plan{Precision::Tf32, TensorLayout::Nhwc},
                               Plan{Precision::Fp16, TensorLayout::Nhwc});
    INFO(model << " " << label(plan));
    Graph graph = build_zoo_model(model, 1);
    init_random_weights(graph, 5);
    for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow}) {
        INFO(to_string(form));
        const Schedule schedule = with_form(make_baseline("nimble", graph), form);
        EngineOptions options = options_for(plan);
        options.schedule = schedule;
        Engine engine(graph, options);
        engine.set_random_inputs(9);
        CHECK(differing_rounds(engine, schedule, 20, false) == 0);
    }
}

TEST_CASE("perturbed replay: merge stages of both kinds change no output bit",
          "[gpu][perturb][batched]") {
    // GoogLeNet's merges are stacked convolutions, RandWire's batched separable ones.
    const std::string model = GENERATE(as<std::string>{}, "googlenet", "randwire");
    const Plan plan = GENERATE(Plan{Precision::Tf32, TensorLayout::Nhwc},
                               Plan{Precision::Fp16, TensorLayout::Nhwc});
    INFO(model << " " << label(plan));
    Graph graph = build_zoo_model(model, 1);
    init_random_weights(graph, 5);
    std::map<MergeKind, int> merges;
    const Schedule merged = with_merges(graph, make_baseline("greedy", graph), &merges);
    REQUIRE(merges[model == "randwire" ? MergeKind::Batched : MergeKind::Stacked] > 0);
    for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow}) {
        INFO(to_string(form));
        const Schedule schedule = with_form(merged, form);
        EngineOptions options = options_for(plan);
        options.schedule = schedule;
        Engine engine(graph, options);
        engine.set_random_inputs(9);
        CHECK(differing_rounds(engine, schedule, 20, false) == 0);
        for (const MergePlan& mp : engine.merge_plans())
            if (model == "randwire") CHECK(mp.path == "batched");
    }
}

TEST_CASE("perturbed replay sees a race: with the waits dropped, outputs differ",
          "[gpu][perturb]") {
    Graph graph = build_zoo_model("googlenet", 1);
    init_random_weights(graph, 5);
    const Schedule schedule = with_form(make_baseline("greedy", graph), ScheduleForm::Dataflow);
    EngineOptions options = options_for(Plan{Precision::Fp16, TensorLayout::Nhwc});
    options.schedule = schedule;  // the arena shares bytes between ops the waits ordered
    Engine engine(graph, options);
    engine.set_random_inputs(9);
    CHECK(differing_rounds(engine, schedule, 20, true) > 0);
}
