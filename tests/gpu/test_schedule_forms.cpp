// [gpu] Schedules in both forms (src/stream_program.h): staged, every stage a barrier, and
// dataflow, each launch waiting only for its inputs on up to eight lanes, and the schedules the
// refinement's moves make (merges, regrouped lanes, joined and split stages). Each must compute
// what the sequential schedule computes, in every precision and layout; the same schedule in
// both forms runs the same kernels, so its outputs must agree bit for bit; so must it with
// priority levels (Schedule::priorities), which move launches between each lane's streams.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "search/baselines.h"
#include "search/schedule_refinement.h"
#include "search/sim_cost_model.h"
#include "search/timeline_sim.h"
#include "src/engine/engine.h"
#include "src/engine/perturbation.h"
#include "src/memory_fit.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/engine_fixtures.h"

using namespace iostune;
using namespace iostune::test;

namespace {

// A schedule the simulated refinement reached from greedy and nimble: merges, joined and split
// stages, lanes shared by regrouped groups.
Schedule refined(const Graph& graph, uint64_t seed) {
    SimulatedScheduleEvaluator evaluator(graph, SimCostModel());
    RefineOptions options;
    options.seed = seed;
    options.max_evaluations = 200;
    options.time_budget_s = 1e9;
    options.min_gain = -1;  // keep every move: as far from the start as 200 moves go
    return refine_schedule(graph,
                           {{"greedy", make_baseline("greedy", graph)},
                            {"nimble", make_baseline("nimble", graph)}},
                           evaluator, options)
        .schedule;
}

// `s` with a priority level per op that changes from op to op, so that a lane's launches hop
// between its streams of every level (Schedule::priorities).
Schedule with_mixed_priorities(const Graph& graph, Schedule s) {
    s.priorities.clear();
    for (int id = 0; id < graph.size(); ++id)
        s.priorities.push_back((id * 7 + id / 3) % (kMaxPriority + 1));
    return s;
}

}  // namespace

TEST_CASE("both forms of concurrent and merged schedules match the reference, and each other "
          "bit for bit, in every precision and layout",
          "[gpu][forms]") {
    Graph graph = every_op_graph(2);
    init_random_weights(graph, 7);
    const HostTensor input = random_input(graph.input_shape(), 11);
    const HostTensor ref = reference_run(graph, input);
    int merges = 0;
    const std::vector<Schedule> schedules = {greedy_schedule(graph), merged_schedule(graph, &merges),
                                             refined(graph, 3)};
    REQUIRE(merges == 2);
    for (const Plan& plan : every_plan()) {
        Engine engine(graph, options_for(plan));
        engine.set_input(input);
        const double bound = op_error_bound(plan.precision);
        for (size_t k = 0; k < schedules.size(); ++k) {
            INFO(label(plan) << ", schedule " << k);
            const HostTensor staged =
                run_schedule(engine, with_form(schedules[k], ScheduleForm::Staged));
            const HostTensor dataflow =
                run_schedule(engine, with_form(schedules[k], ScheduleForm::Dataflow));
            CHECK(relative_error(dataflow, ref) < bound);
            CHECK(bitwise_equal(staged, dataflow));
            // As one CUDA graph, too.
            const CudaGraphExec exec = engine.capture(with_form(schedules[k], ScheduleForm::Dataflow));
            exec.launch(engine.origin_stream());
            CHECK(bitwise_equal(engine.read_output(), dataflow));
            // With priorities: the same kernels in the same order per lane, so the same bits.
            for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow}) {
                const Schedule urgent = with_mixed_priorities(graph, with_form(schedules[k], form));
                CHECK(bitwise_equal(run_schedule(engine, urgent), dataflow));
                const CudaGraphExec urgent_exec = engine.capture(urgent);
                urgent_exec.launch(engine.origin_stream());
                CHECK(bitwise_equal(engine.read_output(), dataflow));
            }
        }
    }
}

namespace {

// The zoo model's dataflow baselines (no merges: the sequential schedule's kernels, so its bits)
// and a refined schedule (merges and all: within the precision's bound).
void check_zoo_forms(const std::string& model) {
    const Plan plan = GENERATE(Plan{Precision::Tf32, TensorLayout::Nhwc},
                               Plan{Precision::Fp16, TensorLayout::Nhwc},
                               Plan{Precision::Fp32, TensorLayout::Nchw});
    INFO(model << " " << label(plan));
    Graph graph = build_zoo_model(model, 1);
    init_random_weights(graph, 5);
    Engine engine(graph, options_for(plan));
    engine.set_random_inputs(9);
    const HostTensor sequential = run_schedule(engine, sequential_schedule(graph));
    // Fitted into a tight memory limit (memory_fit.h): cut stages and dataflow barriers, on the
    // arena planned for them, as one CUDA graph too.
    MemoryPlanOptions memory;
    memory.precision = plan.precision;
    memory.layout = plan.layout;
    const MemoryFitter fitter(graph, memory, 1.1);
    for (const std::string name : {"greedy", "nimble", "opara"}) {
        INFO(name << " dataflow");
        const Schedule s = with_form(make_baseline(name, graph), ScheduleForm::Dataflow);
        CHECK(bitwise_equal(run_schedule(engine, s), sequential));
        const Schedule fitted = fitter.fit(s);
        INFO("fitted: " << fitted.barriers.size() << " barriers");
        CHECK(bitwise_equal(run_schedule(engine, fitted), sequential));
        const CudaGraphExec exec = engine.capture(fitted);
        exec.launch(engine.origin_stream());
        CHECK(bitwise_equal(engine.read_output(), sequential));
        // With priorities, captured, and perturbed (spin delays on some lanes' launches).
        const Schedule urgent = with_mixed_priorities(graph, fitted);
        const CudaGraphExec urgent_exec = engine.capture(urgent);
        urgent_exec.launch(engine.origin_stream());
        CHECK(bitwise_equal(engine.read_output(), sequential));
        for (int round = 0; round < 2; ++round) {
            Perturbation p;
            p.round = round;
            const CudaGraphExec perturbed = engine.capture_perturbed(urgent, p);
            perturbed.launch(engine.origin_stream());
            CHECK(bitwise_equal(engine.read_output(), sequential));
        }
    }
    const Schedule r = refined(graph, 11);
    INFO("refined: " << schedule_to_json(r).dump());
    CHECK(relative_error(run_schedule(engine, r), sequential) < model_error_bound(plan.precision));
}

}  // namespace

TEST_CASE("zoo forms: googlenet's dataflow and refined schedules compute the sequential output",
          "[gpu][forms][zoo]") {
    check_zoo_forms("googlenet");
}

TEST_CASE("zoo forms: inception_v3's dataflow and refined schedules compute the sequential "
          "output",
          "[gpu][forms][zoo]") {
    check_zoo_forms("inception_v3");
}

TEST_CASE("zoo forms: randwire's dataflow and refined schedules compute the sequential output",
          "[gpu][forms][zoo]") {
    check_zoo_forms("randwire");
}
