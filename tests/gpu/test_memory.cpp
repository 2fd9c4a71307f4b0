// [gpu] The engine on its memory plan (src/memory_planner.h, docs/memory.md): zoo models'
// schedules (sequential, greedy, nimble; staged and dataflow) with activations sharing bytes by
// liveness give the CPU reference's output and the sequential schedule's in every precision and
// layout; one engine re-planned schedule after schedule keeps its earlier CUDA graphs valid; the
// engine holds what the CPU plan says, and less than without reuse; engines of two batch sizes
// share one arena and one copy of the weights; a Replayer reports what it holds.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "iostune/replay.h"
#include "search/baselines.h"
#include "search/model_set_baselines.h"
#include "src/engine/engine.h"
#include "src/fusion.h"
#include "src/memory_planner.h"
#include "src/model_set.h"
#include "src/reference/reference.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/engine_fixtures.h"

using namespace iostune;
using namespace iostune::test;

namespace {

Graph zoo_graph(const std::string& name, int batch, uint64_t seed = 3) {
    Graph graph = fuse_epilogues(build_zoo_model(name, batch)).graph;
    init_random_weights(graph, seed);
    return graph;
}

std::vector<std::pair<std::string, Schedule>> concurrent_schedules(const Graph& graph) {
    std::vector<std::pair<std::string, Schedule>> all;
    for (const char* name : {"sequential", "greedy", "nimble"})
        for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow})
            all.emplace_back(fmt::format("{} {}", name, to_string(form)),
                             with_form(make_baseline(name, graph), form));
    return all;
}

HostTensor run_captured(Engine& engine, const CudaGraphExec& exec) {
    exec.launch(engine.origin_stream());
    return engine.read_output();
}

// The memory an engine holds for a plan it was built for equals the CPU plan's, refined by
// the staging its chosen convolutions use (never more than the CPU's, which reserves staging for
// every convolution that may stage), and nothing is allocated outside the plan.
void check_accounting(const Engine& engine, const Graph& graph, const Schedule& schedule,
                      const EngineOptions& options) {
    const MemoryPlan cpu = Engine::plan_memory_for(graph, schedule, options);
    const MemoryPlan& used = engine.memory_plan();
    REQUIRE(used.options.staging.has_value());
    const MemoryPlan refined = plan_memory(graph, schedule, used.options);
    const EngineMemory m = engine.memory();
    CHECK(m.arena == size_t(refined.shared_bytes));
    CHECK(refined.shared_bytes <= cpu.shared_bytes);
    CHECK(m.io == size_t(cpu.io_bytes));
    CHECK(m.weights + m.merged_weights ==
          size_t(weight_bytes(graph, Engine::memory_plan_options(options), &schedule)));
    CHECK(m.other == 0);
    CHECK(used.workspace_slots == cpu.workspace_slots);
    WARN(fmt::format("{}: arena {:.1f} MiB on the GPU, {:.1f} MiB reserved on the CPU (staging "
                     "for every convolution that may stage)",
                     graph.name(), double(refined.shared_bytes) / (1 << 20),
                     double(cpu.shared_bytes) / (1 << 20)));
}

}  // namespace

TEST_CASE(
    "zoo models' schedules on the planned arena match the reference and the sequential "
    "output in every precision and layout",
    "[gpu][engine][memory][zoo]") {
    for (const std::string& name : zoo_model_names()) {
        const Graph graph = zoo_graph(name, 1);
        const HostTensor input = random_input(graph.input_shape(), 5);
        const HostTensor ref = reference_run(graph, input);
        const auto schedules = concurrent_schedules(graph);
        for (const Plan& plan : every_plan()) {
            // Each engine times its convolutions: the large models run two plans only.
            const bool large = graph.size() > 150;
            if (large &&
                !(plan.precision == Precision::Fp32 && plan.layout == TensorLayout::Nchw) &&
                !(plan.precision == Precision::Fp16 && plan.layout == TensorLayout::Nhwc))
                continue;
            const std::string what = fmt::format("{} {}", name, label(plan));
            INFO(what);
            const double bound = model_error_bound(plan.precision);
            EngineOptions options = options_for(plan);
            options.schedule = schedules.front().second;  // planned for it from the start
            Engine engine(graph, options);
            check_accounting(engine, graph, schedules.front().second, options);
            engine.set_input(input);
            // One engine, re-planned schedule after schedule; every graph captured stays valid.
            std::vector<CudaGraphExec> execs;
            std::vector<HostTensor> outs;
            for (const auto& [schedule_name, schedule] : schedules) {
                INFO(schedule_name);
                execs.push_back(engine.capture(schedule));
                outs.push_back(run_captured(engine, execs.back()));
                CHECK(relative_error(outs.back(), ref) < bound);
                CHECK(relative_error(outs.back(), outs.front()) < bound);
            }
            for (size_t k = 0; k < execs.size(); ++k) {
                INFO("graph of " << schedules[k].first << " launched after the last re-plan");
                CHECK(relative_error(run_captured(engine, execs[k]), outs[k]) < 1e-6);
            }
            // Less than every activation in bytes of its own, for the same greedy schedule.
            Engine full(graph, every_output_kept(options_for(plan)));
            full.prepare(schedules[2].second);
            Engine reused(graph, [&] {
                EngineOptions o = options_for(plan);
                o.schedule = schedules[2].second;
                return o;
            }());
            check_accounting(reused, graph, schedules[2].second, reused.options());
            WARN(
                fmt::format("{}: arena {:.1f} MiB (greedy, shared by liveness) vs {:.1f} MiB "
                            "(no reuse); device memory {:.1f} vs {:.1f} MiB",
                            what, double(reused.memory().arena) / (1 << 20),
                            double(full.memory().arena) / (1 << 20),
                            double(reused.device_memory_bytes()) / (1 << 20),
                            double(full.device_memory_bytes()) / (1 << 20)));
            CHECK(reused.memory().arena < full.memory().arena);
            CHECK(reused.device_memory_bytes() < full.device_memory_bytes());
        }
    }
}

TEST_CASE(
    "merge stages on the planned arena: merged ops live in their slices, nothing outside "
    "the plan",
    "[gpu][engine][memory]") {
    Graph graph = every_op_graph(2);
    init_random_weights(graph, 7);
    const HostTensor input = random_input(graph.input_shape(), 11);
    const HostTensor ref = reference_run(graph, input);
    int merges = 0;
    const Schedule merged = merged_schedule(graph, &merges);
    REQUIRE(merges == 2);
    for (const Plan& plan : every_plan()) {
        INFO(label(plan));
        for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow}) {
            const Schedule schedule = with_form(merged, form);
            EngineOptions options = options_for(plan);
            options.schedule = schedule;
            Engine engine(graph, options);
            check_accounting(engine, graph, schedule, options);
            engine.set_input(input);
            CudaGraphExec exec = engine.capture(schedule);
            CHECK(relative_error(run_captured(engine, exec), ref) < op_error_bound(plan.precision));
            int copies = 0;
            for (const MergePlan& mp : engine.merge_plans()) copies += mp.slice_copies;
            CHECK(copies == 3);  // the heads write into their concat: copied out of the merge
        }
    }
}

TEST_CASE("two batch sizes of one model share one arena and one copy of the weights",
          "[gpu][engine][memory]") {
    for (const Plan& plan :
         {Plan{Precision::Tf32, TensorLayout::Nhwc}, Plan{Precision::Fp16, TensorLayout::Nhwc}}) {
        INFO(label(plan));
        const Graph small = zoo_graph("googlenet", 1);
        const Graph large = small.with_batch(4);
        const Schedule s_small = with_form(make_baseline("greedy", small), ScheduleForm::Dataflow);
        const Schedule s_large = make_baseline("nimble", large);
        EngineOptions options = options_for(plan);
        const int64_t need =
            std::max(Engine::plan_memory_for(small, s_small, options).shared_bytes,
                     Engine::plan_memory_for(large, s_large, options).shared_bytes);
        options.arena = std::make_shared<DeviceArena>(size_t(need));
        options.schedule = s_small;
        Engine one(small, options);
        options.schedule = s_large;
        options.weights = one.weights();
        Engine four(large, options);
        CHECK(four.weights() == one.weights());
        CHECK(four.memory().weights_shared);
        CHECK(four.memory().arena_shared);
        CHECK(four.memory().arena == size_t(need));

        const HostTensor in1 = random_input(small.input_shape(), 21);
        const HostTensor in4 = random_input(large.input_shape(), 22);
        one.set_input(in1);
        four.set_input(in4);
        CudaGraphExec g1 = one.capture(s_small);
        CudaGraphExec g4 = four.capture(s_large);
        // Alternately on one stream: each run leaves its own output, whatever the other did to
        // the arena in between.
        const double bound = model_error_bound(plan.precision);
        const HostTensor ref1 = reference_run(small, in1), ref4 = reference_run(large, in4);
        for (int round = 0; round < 2; ++round) {
            g1.launch(one.origin_stream());
            g4.launch(one.origin_stream());
            CHECK(relative_error(one.read_output(), ref1) < bound);
            CHECK(relative_error(four.read_output(), ref4) < bound);
        }

        // Weights of another model, or an arena too small, are refused.
        EngineOptions other = options;
        other.weights = Engine(zoo_graph("googlenet", 1, 99), options_for(plan)).weights();
        CHECK_THROWS_WITH(Engine(large, other), Catch::Contains("another model"));
        EngineOptions tight = options_for(plan);
        tight.arena = std::make_shared<DeviceArena>(size_t(need / 4));
        tight.schedule = s_large;
        CHECK_THROWS_WITH(Engine(large, tight), Catch::Contains("plan_memory_for"));
    }
}

TEST_CASE("a model set on the planned arena: every model's output, side by side or back to back",
          "[gpu][engine][memory][model_set]") {
    const Graph set = combine_models({zoo_graph("squeezenet1_1", 1), zoo_graph("googlenet", 1)},
                                     SetInputs::Separate);
    std::vector<HostTensor> inputs;
    for (int k = 0; k < set.input_count(); ++k)
        inputs.push_back(random_input(set.input_shape(k), 30 + k));
    const std::vector<HostTensor> ref = reference_run_outputs(set, inputs);
    for (const Schedule& schedule :
         {member_streams_schedule(set),
          with_form(member_streams_schedule(set), ScheduleForm::Dataflow),
          back_to_back_schedule(set, {sequential_schedule(member_graph(set, 0)),
                                      sequential_schedule(member_graph(set, 1))})}) {
        EngineOptions options = options_for(Plan{Precision::Fp16, TensorLayout::Nhwc});
        options.schedule = schedule;
        Engine engine(set, options);
        for (int k = 0; k < set.input_count(); ++k) engine.set_input(k, inputs[size_t(k)]);
        CudaGraphExec exec = engine.capture(schedule);
        exec.launch(engine.origin_stream());
        const std::vector<HostTensor> out = engine.read_outputs();
        REQUIRE(out.size() == ref.size());
        for (size_t k = 0; k < out.size(); ++k)
            CHECK(relative_error(out[k], ref[k]) < model_error_bound(Precision::Fp16));
    }
}

TEST_CASE("an engine's memory is seeded: two engines compute the same before any input is set",
          "[gpu][engine][memory]") {
    const Graph graph = zoo_graph("squeezenet1_1", 1);
    const Schedule greedy = make_baseline("greedy", graph);
    std::vector<HostTensor> outs;
    for (int k = 0; k < 2; ++k) {
        EngineOptions options = options_with(Precision::Fp32);
        options.schedule = greedy;
        Engine engine(graph, options);
        CudaGraphExec exec = engine.capture(greedy);
        outs.push_back(run_captured(engine, exec));
    }
    CHECK(relative_error(outs[0], outs[1]) == 0.0);
    // The seeded input is the one random_input gives: the same as setting it.
    EngineOptions options = options_with(Precision::Fp32);
    Engine engine(graph, options);
    engine.set_input(random_input(graph.input_shape(), options.fill_seed));
    CudaGraphExec exec = engine.capture(greedy);
    CHECK(relative_error(run_captured(engine, exec), outs[0]) < kFp32Tolerance);
}

TEST_CASE("a Replayer reports the device memory its plan holds", "[gpu][replay][memory]") {
    ReplayOptions options;
    options.schedule_source = "given";
    options.schedule_name = "greedy";
    const Graph graph = fuse_epilogues(build_zoo_model("resnet50", 1)).graph;
    const Schedule greedy = make_baseline("greedy", graph);
    options.schedule_json = schedule_to_json(greedy).dump();
    options.precision = "fp16";
    Replayer replayer("resnet50", options);
    const ReplayInfo& info = replayer.info();
    EngineOptions engine_options;
    engine_options.precision = Precision::Fp16;
    const MemoryPlan plan = Engine::plan_memory_for(graph, greedy, engine_options);
    // At most the CPU's plan: the engine drops the staging its convolutions do not use.
    CHECK(info.activation_bytes <= size_t(plan.activation_bytes()));
    CHECK(info.activation_bytes >= size_t(plan.io_bytes));
    CHECK(info.weight_bytes > 0);
    CHECK(info.workspace_bytes > 0);
    CHECK(info.device_memory_bytes >=
          info.weight_bytes + info.activation_bytes + info.workspace_bytes);
}

TEST_CASE("an arena offset or a move of the arena changes nothing it computes",
          "[gpu][engine][memory]") {
    // `replay --arena-offset` asks whether latency depends on where the buffers land; its answer
    // means something only if the offset schedule computes exactly what the plain one does.
    const Graph graph = zoo_graph("googlenet", 1);
    const Schedule nimble = with_form(make_baseline("nimble", graph), ScheduleForm::Dataflow);
    std::vector<HostTensor> outs;
    ConvChoices kernels;  // the first engine's, pinned in the others: the same kernels run
    for (const size_t offset : {size_t(0), size_t(17 * 256), size_t(3) << 20}) {
        EngineOptions options = options_with(Precision::Tf32);
        options.schedule = nimble;
        options.arena_offset = offset;
        options.conv_choices = kernels;
        Engine engine(graph, options);
        CudaGraphExec exec = engine.capture(nimble);
        outs.push_back(run_captured(engine, exec));
        CHECK(engine.memory().other >= offset);  // the unused bytes are accounted for
        if (offset == 0) kernels = engine.conv_choices();
    }
    CHECK(relative_error(outs[0], outs[1]) == 0.0);
    CHECK(relative_error(outs[0], outs[2]) == 0.0);
    EngineOptions misaligned = options_with(Precision::Tf32);
    misaligned.arena_offset = 100;
    CHECK_THROWS_WITH(Engine(graph, misaligned), Catch::Contains("not a multiple of 256"));

    // Moved within its room (place_arena), in one engine: the graph captured before still runs
    // where it was, the one captured after runs at the new place, both compute the same bits.
    EngineOptions roomy = options_with(Precision::Tf32);
    roomy.schedule = nimble;
    roomy.conv_choices = kernels;
    roomy.arena_room = size_t(2) << 20;
    Engine engine(graph, roomy);
    CudaGraphExec before = engine.capture(nimble);
    engine.place_arena(size_t(5) << 18);  // 1.25 MiB in
    CudaGraphExec after = engine.capture(nimble);
    CHECK(run_captured(engine, after).data == outs[0].data);
    CHECK(run_captured(engine, before).data == outs[0].data);
    engine.place_arena(0);
    CHECK(run_captured(engine, engine.capture(nimble)).data == outs[0].data);
    CHECK_THROWS_WITH(engine.place_arena(size_t(3) << 20), Catch::Contains("past the arena's room"));
    CHECK_THROWS_WITH(engine.place_arena(100), Catch::Contains("not a multiple of 256"));
}
