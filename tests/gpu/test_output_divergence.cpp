// [gpu] The search's diagnosis of a wrong result (tuning/output_divergence.h) on a healthy
// engine: every op of a concurrent schedule, its launches run one at a time, computes what the
// sequential schedule's op computes, and the sequential schedule computes every op as it did at
// the start. The diagnosis of a check that reports a difference then says so, op by op.
#include <catch2/catch.hpp>

#include "search/baselines.h"
#include "src/engine/engine.h"
#include "src/output_agreement.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/engine_fixtures.h"
#include "tuning/output_divergence.h"

using namespace iostune;
using namespace iostune::test;

TEST_CASE("the divergence diagnosis runs a schedule op by op and finds a healthy one agreeing",
          "[gpu][diagnosis]") {
    const Plan plan = GENERATE(Plan{Precision::Tf32, TensorLayout::Nhwc},
                               Plan{Precision::Fp16, TensorLayout::Nhwc});
    INFO(label(plan));
    Graph graph = build_zoo_model("googlenet", 1);
    init_random_weights(graph, 5);
    Engine engine(graph, options_for(plan));
    engine.set_random_inputs(9);
    const Schedule sequential = sequential_schedule(graph);
    const Schedule nimble = with_form(make_baseline("nimble", graph), ScheduleForm::Dataflow);

    const OpSnapshot at_start = snapshot_ops(engine, sequential);
    REQUIRE(at_start.outputs.size() == size_t(graph.size()));
    REQUIRE(at_start.plans.size() == size_t(graph.size()));
    const OpSnapshot concurrent = snapshot_ops(engine, nimble);
    for (const Op& op : graph.ops()) {
        INFO("op " << op.id << " '" << op.name << "'");
        REQUIRE(at_start.outputs[size_t(op.id)].shape == graph.op(op.id).output);
        CHECK(output_agreement(concurrent.outputs[size_t(op.id)], at_start.outputs[size_t(op.id)],
                               plan.precision)
                  .agrees());
    }
    // A check that always reports a difference: the diagnosis tells which of its findings hold.
    int checks = 0;
    const std::string text = diagnose_divergence(
        engine, nimble, sequential,
        [&](const Schedule&) {
            ++checks;
            return std::string("a different result (a test's claim)");
        },
        &at_start);
    INFO(text);
    CHECK(checks == 2);  // the schedule again, the sequential schedule
    CHECK(text.find("run whole again, it still computes a different result") != std::string::npos);
    CHECK(text.find("computes every op as at the start") != std::string::npos);
    CHECK(text.find("every op agrees with the sequential schedule's") != std::string::npos);
    CHECK(text.find("the diagnosis failed") == std::string::npos);
}

// A kernel that expects its workspace zeroed (a split reduction's counters, say) computes right
// while the workspace happens to hold zeros and wrong after another kernel left values there: a
// wrong result that comes and goes with what ran before (docs/search.md, the co-run bug).
TEST_CASE("no op's output depends on what its workspace held before it ran",
          "[gpu][diagnosis]") {
    const Plan plan = GENERATE(Plan{Precision::Tf32, TensorLayout::Nhwc},
                               Plan{Precision::Fp16, TensorLayout::Nhwc});
    const ConvObjective objective = GENERATE(ConvObjective::Alone, ConvObjective::CoRun);
    INFO(label(plan) << ", convolutions chosen " << to_string(objective));
    Graph graph = build_zoo_model("googlenet", 1);
    init_random_weights(graph, 5);
    EngineOptions options = options_for(plan);
    options.conv_objective = objective;
    Engine engine(graph, options);
    engine.set_random_inputs(9);
    for (const Schedule& schedule :
         {sequential_schedule(graph),
          with_form(make_baseline("nimble", graph), ScheduleForm::Dataflow)}) {
        const std::string found = workspace_dependence(engine, schedule);
        INFO(found);
        CHECK(found.empty());
    }
}
