// [gpu] The engine against the CPU reference: every op kind, every zoo model, sequential,
// concurrent and merged schedules, CUDA graph replay, tf32. Seeded weights and inputs.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "src/blocks.h"
#include "src/engine/device_info.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"
#include "src/error.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/engine_fixtures.h"

using namespace iostune;
using namespace iostune::test;

namespace {

double median_ms(Engine& engine, const Schedule& schedule) {
    CudaGraphExec exec = engine.capture(schedule);
    const LatencyStats stats = measure_graph(exec, engine.origin_stream(), MeasureOptions{5, 20, 1, 0});
    return stats.median_ms;
}

}  // namespace

TEST_CASE("device info names the GPU and the library versions", "[gpu][engine]") {
    const DeviceInfo info = query_device_info(0);
    WARN(info.summary());
    CHECK(!info.name.empty());
    CHECK(info.cc_major >= 7);
    CHECK(info.sm_count > 0);
    CHECK(info.cudnn_version >= 90000);
    CHECK(info.driver_version >= info.runtime_version / 1000 * 1000);
    CHECK_THROWS_AS(query_device_info(999), Error);
}

TEST_CASE("latency summary statistics", "[gpu][engine]") {
    const LatencyStats s = summarize({4.0, 1.0, 3.0, 2.0, 5.0}, {0.1, 0.3, 0.2, 0.1, 0.1}, 2);
    CHECK(s.median_ms == Approx(3.0));
    CHECK(s.min_ms == 1.0);
    CHECK(s.max_ms == 5.0);
    CHECK(s.mean_ms == Approx(3.0));
    CHECK(s.p10_ms == Approx(1.4));
    CHECK(s.p90_ms == Approx(4.6));
    CHECK(s.stddev_ms == Approx(std::sqrt(2.0)));
    CHECK(s.enqueue_median_ms == Approx(0.1));
    CHECK(s.number == 2);
    CHECK(s.samples_ms.size() == 5);
    CHECK_THROWS_AS(summarize({}, {}, 1), Error);
}

TEST_CASE("every op kind matches the CPU reference in fp32, op by op", "[gpu][engine]") {
    Graph graph = every_op_graph(2);
    init_random_weights(graph, 7);
    const HostTensor input = random_input(graph.input_shape(), 11);
    const std::vector<HostTensor> ref = reference_run_all(graph, input);

    for (const bool in_place : {true, false}) {
        EngineOptions options;
        options.precision = Precision::Fp32;
        options.concat_in_place = in_place;
        Engine engine(graph, every_output_kept(options));
        engine.set_input(input);
        const Schedule sequential = sequential_schedule(graph);
        engine.prepare(sequential);
        engine.launch_schedule(sequential, engine.origin_stream());
        const std::vector<OpPlan> plans = engine.op_plans();
        for (const Op& op : graph.ops()) {
            const double err = relative_error(engine.read_op_output(op.id), ref[size_t(op.id)]);
            INFO(fmt::format("concat_in_place={} op {} '{}' ({}) via {} [{}]: relative error {:.3g}",
                             in_place, op.id, op.name, to_string(op.kind), plans[size_t(op.id)].path,
                             plans[size_t(op.id)].algorithms, err));
            CHECK(err < kFp32Tolerance);
        }
        const auto writes_into_concat = [&](const char* name) {
            for (const OpPlan& p : plans)
                if (p.name == name) return p.writes_into_concat;
            FAIL("no op " << name);
            return false;
        };
        CHECK(writes_into_concat("head3x3") == in_place);
        CHECK(writes_into_concat("pre3x3") == in_place);
        const OpPlan& cat_input = plans[size_t(graph.op(1).id)];
        CHECK(cat_input.path == (in_place ? "concat: 1 in place, 1 copied" : "concat: 0 in place, 2 copied"));
        CHECK(plans[size_t(graph.output_id())].path == "cudnnSoftmaxForward");
        if (in_place) WARN("every_op: " << plan_summary(engine));
    }
}

TEST_CASE("every-op graph: concurrent and merged schedules, graph replay and tf32", "[gpu][engine]") {
    Graph graph = every_op_graph(2);
    init_random_weights(graph, 7);
    const HostTensor input = random_input(graph.input_shape(), 11);
    const HostTensor ref = reference_run(graph, input);

    // Every op's output is compared with the reference after whole runs: none shares bytes.
    Engine engine(graph, every_output_kept(options_with(Precision::Fp32)));
    engine.set_input(input);

    const Schedule greedy = greedy_schedule(graph);
    validate(graph, greedy);
    CHECK(relative_error(run_schedule(engine, greedy), ref) < kFp32Tolerance);
    CHECK(engine.lane_count() >= 4);

    int merges = 0;
    const Schedule merged = merged_schedule(graph, &merges);
    validate(graph, merged);
    REQUIRE(merges == 2);  // head1x1 + head3x3 + head5x5, proj1x1 + proj3x3
    const HostTensor merged_out = run_schedule(engine, merged);
    CHECK(relative_error(merged_out, ref) < kFp32Tolerance);
    std::vector<MergePlan> plans = engine.merge_plans();
    REQUIRE(plans.size() == 2);
    std::sort(plans.begin(), plans.end(),
              [](const MergePlan& a, const MergePlan& b) { return a.ops.size() > b.ops.size(); });
    CHECK(plans[0].out_channels == 24);
    CHECK(plans[0].kernel_h == 5);
    // The heads' outputs are slices of cat_heads (in place), so each gets its slice copied; the
    // projections live in the merged output and the add reads their slices.
    CHECK(plans[0].slice_copies == 3);
    CHECK(plans[1].out_channels == 48);
    CHECK(plans[1].slice_copies == 0);
    // Each merged op's own output equals the reference too (what its consumers read).
    const std::vector<HostTensor> ref_all = reference_run_all(graph, input);
    for (const MergePlan& plan : plans)
        for (int id : plan.ops) {
            INFO(plan.signature << " via " << plan.path << " [" << plan.algorithms << "]");
            CHECK(relative_error(engine.read_op_output(id), ref_all[size_t(id)]) <
                  kFp32Tolerance);
        }

    SECTION("a captured schedule replays the direct launches on a new input") {
        CudaGraphExec exec = engine.capture(merged);
        CHECK(exec.node_count() > size_t(graph.size()) / 2);
        const HostTensor input2 = random_input(graph.input_shape(), 12);
        engine.set_input(input2);
        engine.launch_schedule(merged, engine.origin_stream());
        const HostTensor direct = engine.read_output();
        engine.set_input(input);
        run_schedule(engine, greedy);  // overwrite every buffer with the first input's values
        engine.set_input(input2);
        exec.launch(engine.origin_stream());
        const HostTensor replayed = engine.read_output();
        CHECK(relative_error(replayed, direct) < 1e-6);
        CHECK(relative_error(replayed, reference_run(graph, input2)) < kFp32Tolerance);

        const LatencyStats stats = measure_graph(exec, engine.origin_stream(), MeasureOptions{3, 10, 2, 0});
        CHECK(stats.samples_ms.size() == 10);
        CHECK(stats.number == 2);
        CHECK(stats.min_ms > 0);
        CHECK(stats.min_ms <= stats.median_ms);
        CHECK(stats.median_ms <= stats.max_ms);
    }
    SECTION("a single stage captures on its own") {
        const std::vector<Stage> stages = greedy.flat_stages();
        const Stage wide = *std::max_element(stages.begin(), stages.end(), [](const Stage& a, const Stage& b) {
            return a.groups.size() < b.groups.size();
        });
        REQUIRE(wide.groups.size() >= 4);
        CudaGraphExec exec = engine.capture_stage(wide);
        exec.launch(engine.origin_stream());
        engine.synchronize();
        for (const auto& group : wide.groups)
            CHECK(relative_error(engine.read_op_output(group[0]), ref_all[size_t(group[0])]) <
                  kFp32Tolerance);
    }
    SECTION("tf32 stays within 1e-2") {
        Engine tf32(graph, options_with(Precision::Tf32));
        tf32.set_input(input);
        CHECK(relative_error(run_schedule(tf32, merged), ref) < kTf32Tolerance);
    }
    SECTION("bad use is reported, not crashed on") {
        CHECK_THROWS_AS(engine.launch_op(graph.size(), engine.origin_stream()), Error);
        CHECK_THROWS_AS(engine.set_input(HostTensor(Shape{1, 3, 33, 33})), Error);
        Schedule missing = greedy;
        missing.blocks.back().pop_back();
        CHECK_THROWS_AS(engine.prepare(missing), Error);
    }
}

TEST_CASE("zoo models match the CPU reference in every precision and layout",
          "[gpu][engine][zoo][precision]") {
    // fp32 NCHW and the 16-bit channels-last plans run sequential, concurrent and merged
    // schedules; the other plans sequential, and only on the models below 150 ops (each engine
    // times every convolution's candidates: NASNet's and RandWire's would double the suite).
    struct Plan {
        Precision precision;
        TensorLayout layout;
        bool every_schedule;
    };
    const std::vector<Plan> plans = {{Precision::Fp32, TensorLayout::Nchw, true},
                                     {Precision::Fp16, TensorLayout::Nhwc, true},
                                     {Precision::Bf16, TensorLayout::Nhwc, true},
                                     {Precision::Fp16, TensorLayout::Nchw, false},
                                     {Precision::Tf32, TensorLayout::Nhwc, false}};
    for (const std::string& name : zoo_model_names()) {
        for (const int batch : {1, 2}) {
            if (batch == 2 && name != "squeezenet1_1") continue;
            Graph graph = build_zoo_model(name, batch);
            init_random_weights(graph, 3);
            const HostTensor input = random_input(graph.input_shape(), 5);
            const auto t0 = std::chrono::steady_clock::now();
            const HostTensor ref = reference_run(graph, input);
            const double ref_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const Schedule sequential = sequential_schedule(graph);
            const Schedule greedy = greedy_schedule(graph);
            int merges = 0;
            const Schedule merged = merged_schedule(graph, &merges);

            for (const Plan& plan : plans) {
                if (!plan.every_schedule && graph.size() > 150) continue;
                EngineOptions options;
                options.precision = plan.precision;
                options.layout = plan.layout;
                Engine engine(graph, options);
                engine.set_input(input);
                const double bound = model_error_bound(plan.precision);
                const std::string label = fmt::format("{} b{} {} {}", name, batch,
                                                      to_string(plan.precision),
                                                      to_string(plan.layout));
                const double e_seq = relative_error(run_schedule(engine, sequential), ref);
                INFO(fmt::format("{}: relative error sequential {:.3g} (bound {:.3g})", label,
                                 e_seq, bound));
                CHECK(e_seq < bound);
                const double seq_ms = median_ms(engine, sequential);
                if (!plan.every_schedule) {
                    WARN(fmt::format("{}: err seq {:.2g}; graph median ms: sequential {:.3f}; {}",
                                     label, e_seq, seq_ms, plan_summary(engine)));
                    continue;
                }
                const double e_greedy = relative_error(run_schedule(engine, greedy), ref);
                const double e_merged = relative_error(run_schedule(engine, merged), ref);
                INFO(fmt::format("{}: relative error greedy {:.3g}, merged ({} merges) {:.3g}", label,
                                 e_greedy, merges, e_merged));
                CHECK(e_greedy < bound);
                CHECK(e_merged < bound);

                int copies = 0, merged_ops = 0;
                for (const MergePlan& mp : engine.merge_plans()) {
                    copies += mp.slice_copies;
                    merged_ops += int(mp.ops.size());
                }
                const double greedy_ms = median_ms(engine, greedy);
                const double merged_ms = median_ms(engine, merged);
                CHECK(relative_error(engine.read_output(), ref) < bound);  // after replays
                WARN(fmt::format("{}: {} ops, {} lanes, {:.0f} MiB; err seq {:.2g} greedy {:.2g} "
                                 "merged {:.2g}; graph median ms: sequential {:.3f}, greedy "
                                 "{:.3f}, merged({} stages, {} ops, {} slice copies) {:.3f}; CPU "
                                 "reference {:.1f} s; {}",
                                 label, graph.size(), engine.lane_count(),
                                 double(engine.device_memory_bytes()) / (1 << 20), e_seq, e_greedy,
                                 e_merged, seq_ms, greedy_ms, merges, merged_ops, copies,
                                 merged_ms, ref_s, plan_summary(engine)));
            }
        }
    }
}

TEST_CASE("tf32 zoo model stays within 1e-2 of the reference", "[gpu][engine][zoo]") {
    Graph graph;
    try {
        graph = build_zoo_model("inception_v3", 1);
    } catch (const Error& e) {
        WARN("inception_v3 skipped: " << e.what());
        return;
    }
    init_random_weights(graph, 3);
    const HostTensor input = random_input(graph.input_shape(), 5);
    Engine engine(graph, options_with(Precision::Tf32));
    engine.set_input(input);
    const Schedule greedy = greedy_schedule(graph);
    const double err = relative_error(run_schedule(engine, greedy), reference_run(graph, input));
    WARN(fmt::format("inception_v3 tf32 relative error {:.3g}; graph median {:.3f} ms", err,
                     median_ms(engine, greedy)));
    CHECK(err < kTf32Tolerance);
}
