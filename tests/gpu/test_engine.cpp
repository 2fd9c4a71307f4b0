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

using namespace iostune;

namespace {

constexpr double kFp32Tolerance = 1e-4;
constexpr double kTf32Tolerance = 1e-2;

// ||out - ref|| / ||ref||
double relative_error(const HostTensor& out, const HostTensor& ref) {
    REQUIRE(out.shape == ref.shape);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < ref.data.size(); ++i) {
        const double d = double(out.data[i]) - double(ref.data[i]);
        diff += d * d;
        norm += double(ref.data[i]) * double(ref.data[i]);
    }
    return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// Every op kind and the engine's special paths: a concat reading the graph input (copied) and
// producers written in place, mergeable 1x1/3x3/5x5 heads, grouped conv, both SepConv forms,
// 3-input add, cuDNN pooling and ceil_mode pooling, global pools, linear, softmax.
Graph every_op_graph(int batch) {
    Graph g("every_op", Shape{batch, 3, 33, 33});
    const int pre = g.add(OpKind::Conv, ConvAttrs{5, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true},
                          {kGraphInput}, "pre3x3");
    const int cat0 = g.add(OpKind::Concat, ConcatAttrs{}, {kGraphInput, pre}, "cat_input");
    const int stem = g.add(OpKind::Conv, ConvAttrs{16, 3, 3, 2, 2, 1, 1, 1, 1, 1, true, true},
                           {cat0}, "stem");  // 17x17
    const int h1 = g.add(OpKind::Conv, ConvAttrs{8, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, true}, {stem},
                         "head1x1");
    const int h3 = g.add(OpKind::Conv, ConvAttrs{12, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true}, {stem},
                         "head3x3");
    const int h5 = g.add(OpKind::Conv, ConvAttrs{4, 5, 5, 1, 1, 2, 2, 1, 1, 1, true, true}, {stem},
                         "head5x5");
    const int pmax = g.add(OpKind::MaxPool, PoolAttrs{3, 3, 1, 1, 1, 1, false, true, false}, {stem},
                           "maxpool3x3");
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {h1, h3, h5, pmax}, "cat_heads");  // 40
    const int grouped = g.add(OpKind::Conv, ConvAttrs{40, 3, 3, 1, 1, 1, 1, 1, 1, 4, false, false},
                              {cat}, "grouped3x3");
    const int sep = g.add(OpKind::SepConv, SepConvAttrs{24, 5, 1, 2, 1, true, true}, {cat},
                          "sep5x5");
    const int sep_dil = g.add(OpKind::SepConv, SepConvAttrs{24, 3, 1, 2, 2, false, false}, {cat},
                              "sep3x3_dilated");
    const int proj = g.add(OpKind::Conv, ConvAttrs{24, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, false},
                           {cat}, "proj1x1");
    const int proj3 = g.add(OpKind::Conv, ConvAttrs{24, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, false},
                            {cat}, "proj3x3");
    const int add = g.add(OpKind::Add, AddAttrs{true}, {sep, sep_dil, proj, proj3}, "add4_relu");
    const int relu = g.add(OpKind::Relu, ReluAttrs{}, {grouped}, "relu");
    const int ident = g.add(OpKind::Identity, IdentityAttrs{}, {relu}, "identity");
    const int pceil = g.add(OpKind::MaxPool, PoolAttrs{2, 2, 2, 2, 0, 0, true, true, false}, {add},
                            "maxpool_ceil");  // 9x9
    const int aceil = g.add(OpKind::AvgPool, PoolAttrs{2, 2, 2, 2, 0, 0, true, true, false}, {ident},
                            "avgpool_ceil");  // 9x9
    const int aexcl = g.add(OpKind::AvgPool, PoolAttrs{3, 3, 1, 1, 1, 1, false, false, false},
                            {ident}, "avgpool_exclude_pad");  // 17x17
    const int cat2 = g.add(OpKind::Concat, ConcatAttrs{}, {pceil, aceil}, "cat_pools");  // 64
    const int gap = g.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {cat2},
                          "global_avg");
    const int gmax = g.add(OpKind::MaxPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {aexcl},
                           "global_max");
    const int cat3 = g.add(OpKind::Concat, ConcatAttrs{}, {gap, gmax}, "cat_global");  // 104
    const int fc = g.add(OpKind::Linear, LinearAttrs{10, true}, {cat3}, "fc");
    g.add(OpKind::Softmax, SoftmaxAttrs{}, {fc}, "softmax");
    return g;
}

// Per block, every ready op in one stage, each its own group (a greedy-like concurrent schedule).
Schedule greedy_schedule(const Graph& graph) {
    Schedule schedule;
    std::vector<bool> done(size_t(graph.size()), false);
    for (const Block& block : partition_blocks(graph)) {
        std::vector<int> left = block.ops;
        std::vector<Stage> stages;
        while (!left.empty()) {
            Stage stage;
            std::vector<int> rest;
            for (int id : left) {
                const auto& in = graph.op(id).inputs;
                const bool ready = std::all_of(in.begin(), in.end(), [&](int i) {
                    return i == kGraphInput || done[size_t(i)];
                });
                if (ready) {
                    stage.groups.push_back({id});
                } else {
                    rest.push_back(id);
                }
            }
            REQUIRE(!stage.groups.empty());
            for (const auto& group : stage.groups) done[size_t(group[0])] = true;
            stages.push_back(std::move(stage));
            left = std::move(rest);
        }
        schedule.blocks.push_back(std::move(stages));
    }
    return schedule;
}

// The greedy schedule with, in each stage, the convolutions that read one tensor and may merge
// pulled out into a merge stage run just before the rest of that stage.
Schedule merged_schedule(const Graph& graph, int* merge_count) {
    Schedule schedule = greedy_schedule(graph);
    *merge_count = 0;
    for (auto& block : schedule.blocks) {
        std::vector<Stage> stages;
        for (const Stage& stage : block) {
            std::map<int, std::vector<int>> convs_by_input;
            for (const auto& group : stage.groups) {
                const Op& op = graph.op(group[0]);
                if (op.kind == OpKind::Conv) convs_by_input[op.inputs[0]].push_back(op.id);
            }
            std::vector<int> merged;
            for (const auto& [input, convs] : convs_by_input) {
                for (size_t seed = 0; seed < convs.size(); ++seed) {
                    if (std::find(merged.begin(), merged.end(), convs[seed]) != merged.end()) continue;
                    std::vector<int> set{convs[seed]};
                    for (size_t k = seed + 1; k < convs.size(); ++k) {
                        std::vector<int> bigger = set;
                        bigger.push_back(convs[k]);
                        if (std::find(merged.begin(), merged.end(), convs[k]) == merged.end() &&
                            can_merge(graph, bigger))
                            set = std::move(bigger);
                    }
                    if (set.size() < 2) continue;
                    stages.push_back(Stage{StageStrategy::Merge, {set}});
                    merged.insert(merged.end(), set.begin(), set.end());
                    ++*merge_count;
                }
            }
            Stage rest;
            for (const auto& group : stage.groups)
                if (std::find(merged.begin(), merged.end(), group[0]) == merged.end())
                    rest.groups.push_back(group);
            if (!rest.groups.empty()) stages.push_back(std::move(rest));
        }
        block = std::move(stages);
    }
    return schedule;
}

HostTensor run_schedule(Engine& engine, const Schedule& schedule) {
    engine.prepare(schedule);
    engine.launch_schedule(schedule, engine.origin_stream());
    return engine.read_output();
}

std::string plan_summary(const Engine& engine) {
    std::map<std::string, int> paths;
    int in_place = 0;
    for (const OpPlan& p : engine.op_plans()) {
        if (p.kind == OpKind::Conv) ++paths[p.path];
        if (p.writes_into_concat) ++in_place;
    }
    std::string text = fmt::format("{} ops write into their concat slice; conv paths:", in_place);
    for (const auto& [path, count] : paths) text += fmt::format(" [{}] x{}", path, count);
    return text;
}

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
        Engine engine(graph, options);
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

    Engine engine(graph, EngineOptions{Precision::Fp32});
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
        for (int id : plan.ops)
            CHECK(relative_error(engine.read_op_output(id), ref_all[size_t(id)]) < kFp32Tolerance);

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
        Engine tf32(graph, EngineOptions{Precision::Tf32});
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

TEST_CASE("zoo models match the CPU reference in fp32 (sequential, concurrent, merged)",
          "[gpu][engine][zoo]") {
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

            Engine engine(graph, EngineOptions{Precision::Fp32});
            engine.set_input(input);
            const Schedule sequential = sequential_schedule(graph);
            const Schedule greedy = greedy_schedule(graph);
            int merges = 0;
            const Schedule merged = merged_schedule(graph, &merges);
            const double e_seq = relative_error(run_schedule(engine, sequential), ref);
            const double e_greedy = relative_error(run_schedule(engine, greedy), ref);
            const double e_merged = relative_error(run_schedule(engine, merged), ref);
            INFO(fmt::format("{} batch {}: relative error sequential {:.3g}, greedy {:.3g}, "
                             "merged ({} merges) {:.3g}", name, batch, e_seq, e_greedy, merges,
                             e_merged));
            CHECK(e_seq < kFp32Tolerance);
            CHECK(e_greedy < kFp32Tolerance);
            CHECK(e_merged < kFp32Tolerance);

            int copies = 0, merged_ops = 0;
            for (const MergePlan& plan : engine.merge_plans()) {
                copies += plan.slice_copies;
                merged_ops += int(plan.ops.size());
            }
            const double seq_ms = median_ms(engine, sequential);
            const double greedy_ms = median_ms(engine, greedy);
            const double merged_ms = median_ms(engine, merged);
            CHECK(relative_error(engine.read_output(), ref) < kFp32Tolerance);  // after replays
            WARN(fmt::format("{} b{} fp32: {} ops, {} lanes, {:.0f} MiB; err seq {:.2g} greedy "
                             "{:.2g} merged {:.2g}; graph median ms: sequential {:.3f}, greedy "
                             "{:.3f}, merged({} stages, {} ops, {} slice copies) {:.3f}; CPU reference {:.1f} s; {}",
                             name, batch, graph.size(), engine.lane_count(),
                             double(engine.device_memory_bytes()) / (1 << 20), e_seq, e_greedy,
                             e_merged, seq_ms, greedy_ms, merges, merged_ops, copies, merged_ms, ref_s,
                             plan_summary(engine)));
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
    Engine engine(graph, EngineOptions{Precision::Tf32});
    engine.set_input(input);
    const Schedule greedy = greedy_schedule(graph);
    const double err = relative_error(run_schedule(engine, greedy), reference_run(graph, input));
    WARN(fmt::format("inception_v3 tf32 relative error {:.3g}; graph median {:.3f} ms", err,
                     median_ms(engine, greedy)));
    CHECK(err < kTf32Tolerance);
}
