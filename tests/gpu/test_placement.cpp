// [gpu] Placement: one schedule, on the same kernels and the same weights, captured on arenas
// placed at different offsets (EngineOptions::arena_offset) in one process, and timed in turns.
// It computes the same bits wherever it lies; how much its time moves with the placement is
// printed (docs/search-log.md, "The rival check on a GPU, and placement as a suspect": the search
// compares schedules in one process whose arena it reuses and regrows, replay places it anew).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "iostune/replay.h"
#include "replay/model_spec.h"
#include "search/baselines.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"
#include "src/fusion.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/test_dir.h"
#include "src/engine/arena_placements.h"
#include "tuning/tuning_job.h"

using namespace iostune;

TEST_CASE("a schedule placed at other offsets computes the same bits; its time per placement",
          "[gpu][timing][placement]") {
    struct Key {
        const char* model;
        Precision precision;
    };
    for (const Key key : {Key{"googlenet", Precision::Tf32}, Key{"randwire", Precision::Fp16}}) {
        Graph graph = fuse_epilogues(build_zoo_model(key.model, 1)).graph;
        init_random_weights(graph, 3);
        const Schedule schedule = with_form(make_baseline("nimble", graph), ScheduleForm::Dataflow);
        // Offset 0 twice (two arenas at the same offset: what placement alone does not explain),
        // then offsets inside and across 2 MiB pages.
        const std::vector<size_t> offsets = {0, 0, 4096, 65536, 1 << 20, 3 << 20};
        std::vector<std::unique_ptr<Engine>> engines;
        std::vector<CudaGraphExec> execs;
        for (const size_t offset : offsets) {
            EngineOptions options;
            options.precision = key.precision;
            options.schedule = schedule;
            options.arena_offset = offset;
            if (!engines.empty()) {  // the first engine's weights and kernels, shared
                options.weights = engines.front()->weights();
                options.conv_choices = engines.front()->conv_choices();
            }
            engines.push_back(std::make_unique<Engine>(graph, options));
            execs.push_back(engines.back()->capture(schedule));
        }
        std::vector<HostTensor> outputs;
        for (size_t k = 0; k < engines.size(); ++k) {
            execs[k].launch(engines[k]->origin_stream());
            outputs.push_back(engines[k]->read_output());
            // Bit for bit, every convolution on the first engine's kernel (call166 found a
            // staged convolution pinned to its packed twin's: conv_planner.cpp).
            CHECK(outputs[k].data == outputs.front().data);
            if (k > 0) CHECK(engines[k]->pinned_conv_count() == engines[k]->conv_count());
        }
        std::vector<const CudaGraphExec*> timed;
        for (const CudaGraphExec& e : execs) timed.push_back(&e);
        const MeasureOptions options{20, 200, 1, 0, 200, RepeatMode::EachRepeat};
        const std::vector<LatencyStats> stats =
            measure_interleaved(timed, engines.front()->origin_stream(), options, 10);
        std::string line = fmt::format("{} b1 {} nimble-dataflow, in turns:", key.model,
                                       to_string(key.precision));
        double least = stats.front().median_ms, most = least;
        for (size_t k = 0; k < stats.size(); ++k) {
            line += fmt::format(" offset {} {:.4f} ms;", offsets[k], stats[k].median_ms);
            least = std::min(least, stats[k].median_ms);
            most = std::max(most, stats[k].median_ms);
        }
        WARN(fmt::format("{} spread {:.1f}%", line, 100 * (most / least - 1)));
        // Loose on purpose (the spread is what is measured): an offset that broke the kernels'
        // alignment or their choice would show as far more.
        CHECK(most < least * 1.25);
    }
}

TEST_CASE("timed in turns at several placements: samples pooled, the engine back where it was",
          "[gpu][timing][placement]") {
    Graph graph = fuse_epilogues(build_zoo_model("googlenet", 1)).graph;
    init_random_weights(graph, 3);
    const std::vector<Schedule> schedules = {
        with_form(make_baseline("nimble", graph), ScheduleForm::Dataflow),
        make_baseline("greedy", graph)};
    EngineOptions options;
    options.precision = Precision::Tf32;
    options.arena_room = arena_room(3);
    Engine engine(graph, options);
    const HostTensor before = [&] {
        const CudaGraphExec exec = engine.capture(schedules[0]);
        exec.launch(engine.origin_stream());
        return engine.read_output();
    }();
    const MeasureOptions timing{2, 30, 1, 0, 0, RepeatMode::EachRepeat};
    const PlacedTimings placed =
        time_placed_in_turns(engine, schedules, timing, 5, arena_placements(3));
    for (size_t k = 0; k < schedules.size(); ++k) {
        REQUIRE(placed.stats[k]);
        CHECK(placed.errors[k].empty());
        CHECK(placed.stats[k]->samples_ms.size() == 30);  // 10 at each of three placements
        CHECK(placed.stats[k]->median_ms > 0);
    }
    CHECK(engine.arena_offset() == 0);
    const CudaGraphExec exec = engine.capture(schedules[0]);
    exec.launch(engine.origin_stream());
    CHECK(engine.read_output().data == before.data);
    // One placement: the engine is not moved, all the repeats in one timing.
    const PlacedTimings here = time_placed_in_turns(engine, schedules, timing, 5, {0});
    REQUIRE(here.stats[0]);
    CHECK(here.stats[0]->samples_ms.size() == 30);
    WARN(fmt::format("googlenet b1 tf32 at three placements: nimble-dataflow {:.4f} ms, greedy "
                     "{:.4f}; at one: {:.4f}, {:.4f}",
                     placed.stats[0]->median_ms, placed.stats[1]->median_ms,
                     here.stats[0]->median_ms, here.stats[1]->median_ms));
}

TEST_CASE("a search timing its comparisons at three placements stores a valid schedule",
          "[gpu][placement][replay]") {
    const std::filesystem::path dir = test::process_temp_dir("iostune_test_placement");
    const std::string db = (dir / "placements.db").string();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
    TuningOptions options;
    options.cost = CostChoice::Measured;
    options.db_path = db;
    options.search.progress = false;
    options.time_budget_s = 15;
    options.placements = 3;
    const TuningSummary summary =
        run_tuning_job(load_model_spec("squeezenet1_1", 1), options, [](const std::string&) {});
    REQUIRE(summary.measured_ms);
    CHECK(*summary.max_abs_diff <= *summary.tolerance);
    CHECK(summary.stats["placements"] == nlohmann::json(arena_placements(3)));
    CHECK(summary.predicted_ms > 0);
    CHECK(summary.stats["refine"]["evaluations"].get<int>() > 0);  // the refinement timed some
    WARN(fmt::format("squeezenet1_1 b1 with 3 placements: {:.4f} ms ({}), predicted {:.4f}, in "
                     "{:.1f} s",
                     *summary.measured_ms, summary.kept_strategy, summary.predicted_ms,
                     summary.total_seconds));
}

TEST_CASE("replay timed at three placements: samples pooled, a median each, the graph still right",
          "[gpu][placement][replay]") {
    ReplayOptions options;
    options.schedule_source = "sequential";
    options.placements = 3;
    Replayer placed("googlenet", options);
    CHECK(placed.info().placements == 3);
    std::vector<float> input(placed.input_elements(0), 0.25f);
    std::vector<float> before(placed.output_elements(0)), after(before.size());
    placed.run_host(input.data(), before.data(), nullptr);

    const ReplayTiming t = placed.benchmark(90, nullptr, 5);
    REQUIRE(t.placement_median_ms.size() == 3);
    CHECK(t.iterations == 90);
    CHECK(t.latency_ms.size() == 90);  // 30 at each
    const auto [least, most] =
        std::minmax_element(t.placement_median_ms.begin(), t.placement_median_ms.end());
    CHECK(*least > 0);
    // A pooled median lies between the groups' medians.
    CHECK(t.median_ms >= *least * (1 - 1e-9));
    CHECK(t.median_ms <= *most * (1 + 1e-9));
    // Back where it began: the Replayer's own graph runs on the buffers it was captured on.
    placed.run_host(input.data(), after.data(), nullptr);
    CHECK(after == before);
    WARN(fmt::format("googlenet b1 tf32 sequential, replayed at three placements: {:.4f} / "
                     "{:.4f} / {:.4f} ms, pooled {:.4f}",
                     t.placement_median_ms[0], t.placement_median_ms[1],
                     t.placement_median_ms[2], t.median_ms));

    options.placements = 1;
    Replayer here("googlenet", options);
    CHECK(here.benchmark(20, nullptr, 5).placement_median_ms.empty());
}
