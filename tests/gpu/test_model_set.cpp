// [gpu] Model sets (src/model_set.h) on the GPU: the combined graph's schedules (searched,
// every model on its own stream, back to back) reproduce each model's output run alone, in
// TF32 and fp16; a measured search stores the set under its own key and the Replayer runs it
// with one input per model (or one shared) and one output per model.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "iostune/replay.h"
#include "replay/model_spec.h"
#include "search/baselines.h"
#include "search/device_profile.h"
#include "search/ios_search.h"
#include "search/model_set_baselines.h"
#include "search/sim_cost_model.h"
#include "src/engine/engine.h"
#include "src/model_set.h"
#include "src/precision.h"
#include "src/weights.h"
#include "tuning/tuning_job.h"
#include "tests/gpu/test_dir.h"

using namespace iostune;
namespace fs = std::filesystem;

namespace {

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
    return worst;
}

double tolerance_for(Precision precision, const std::vector<float>& reference) {
    double m = 0;
    for (float v : reference) m = std::max(m, double(std::fabs(v)));
    return schedule_tolerance(precision) * std::max(1.0, m);
}

// Member `m` of `set` run alone (its own engine, sequential schedule) on the input it reads.
HostTensor alone(const Graph& set, int m, const std::vector<HostTensor>& inputs,
                 const EngineOptions& options) {
    Engine engine(member_graph(set, m), options);
    engine.set_input(inputs[size_t(graph_input_index(set.members()[size_t(m)].input))]);
    engine.launch_schedule(sequential_schedule(engine.graph()), engine.origin_stream());
    return engine.read_output();
}

std::vector<HostTensor> inputs_for(const Graph& set) {
    std::vector<HostTensor> inputs;
    for (int k = 0; k < set.input_count(); ++k)
        inputs.push_back(random_input(set.input_shape(k), 21 + uint64_t(k)));
    return inputs;
}

}  // namespace

TEST_CASE("a model set's schedules give each model's own output", "[gpu][model_set]") {
    const Precision precision = GENERATE(Precision::Tf32, Precision::Fp16);
    const bool shared = GENERATE(true, false);
    const Graph set = shared ? load_models({"squeezenet1_1", "squeezenet1_1"}, 2, true)
                             : load_models({"googlenet", "squeezenet1_1"}, 2, false);
    CAPTURE(to_string(precision), set.name(), shared);
    EngineOptions options;
    options.precision = precision;
    const std::vector<HostTensor> inputs = inputs_for(set);
    std::vector<HostTensor> expected;
    for (int m = 0; m < int(set.members().size()); ++m) expected.push_back(alone(set, m, inputs, options));

    SimCostModel sim(device_profile("h100"), precision);
    SearchOptions search;
    search.progress = false;
    std::vector<Schedule> member_schedules;
    for (int m = 0; m < int(set.members().size()); ++m)
        member_schedules.push_back(make_baseline("greedy", member_graph(set, m)));
    // Back to back with the first member in dataflow form: the set's schedule is dataflow with
    // barriers, each member in its own form.
    std::vector<Schedule> mixed_forms = member_schedules;
    mixed_forms[0] = with_form(mixed_forms[0], ScheduleForm::Dataflow);
    const std::vector<std::pair<std::string, Schedule>> schedules = {
        {"searched", ios_search(set, sim, search).schedule},
        {"streams", member_streams_schedule(set)},
        {"back-to-back", back_to_back_schedule(set, member_schedules)},
        {"back-to-back, member forms", back_to_back_schedule(set, mixed_forms)},
        {"greedy", make_baseline("greedy", set)},
    };
    Engine engine(set, options);
    for (int k = 0; k < set.input_count(); ++k) engine.set_input(k, inputs[size_t(k)]);
    for (const auto& [name, schedule] : schedules) {
        CAPTURE(name);
        const CudaGraphExec exec = engine.capture(schedule);
        exec.launch(engine.origin_stream());
        const std::vector<HostTensor> outputs = engine.read_outputs();
        REQUIRE(outputs.size() == set.members().size());
        for (size_t m = 0; m < outputs.size(); ++m) {
            CAPTURE(m);
            CHECK(outputs[m].shape == expected[m].shape);
            CHECK(max_abs_diff(outputs[m].data, expected[m].data) <=
                  tolerance_for(precision, expected[m].data));
        }
    }
    // The two models of a shared set have different weights: different outputs.
    if (shared) CHECK(max_abs_diff(expected[0].data, expected[1].data) > 1e-3);
}

TEST_CASE("a measured search stores the set; the Replayer runs it with one output per model",
          "[gpu][model_set][replay]") {
    const fs::path dir = test::process_temp_dir("iostune_test_model_set");
    const std::string db = (dir / "set.db").string();
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
    const std::vector<std::string> models = {"googlenet", "squeezenet1_1"};

    TuningOptions tuning;
    tuning.cost = CostChoice::Measured;
    tuning.db_path = db;
    tuning.search.progress = false;
    // Three searches: a budget of their own keeps the [gpu] suite's shard within its time (the
    // default 60 s each took this test to 147 s once the refinement used its whole share).
    tuning.time_budget_s = 20;
    // Each model alone first, so the back-to-back baseline runs their own best schedules.
    for (const std::string& m : models) run_tuning_job(load_model_spec(m, 1), tuning, [](auto&&) {});
    std::vector<std::string> notices;
    const Graph set = load_models(models, 1, false);
    const TuningSummary summary =
        run_tuning_job(set, tuning, [&](const std::string& line) { notices.push_back(line); });
    REQUIRE(summary.measured_ms);
    CHECK(summary.set_inputs == "separate");
    std::vector<std::string> timed;
    for (const ContestEntry& e : summary.baseline_ms) timed.push_back(e.strategy);
    CHECK(std::count(timed.begin(), timed.end(), "streams") == 1);
    CHECK(std::count(timed.begin(), timed.end(), "back-to-back") == 1);
    CHECK(std::any_of(notices.begin(), notices.end(), [](const std::string& l) {
        return l.find("back-to-back baseline: googlenet: schedule #") != std::string::npos;
    }));
    WARN(fmt::format("{} b1 tf32: searched {:.4f} ms, kept {}; baselines:", set.name(),
                     *summary.measured_ms, summary.kept_strategy));
    for (const ContestEntry& e : summary.baseline_ms)
        WARN(fmt::format("  {} {:.4f} ms", e.strategy, e.median_ms));

    ReplayOptions options;
    options.db_path = db;
    Replayer replayer(models, options);
    REQUIRE(replayer.input_count() == 2);
    REQUIRE(replayer.output_count() == 2);
    CHECK(replayer.info().members == models);
    CHECK(replayer.info().set_inputs == "separate");
    CHECK(replayer.info().schedule_id == summary.best_schedule_id);

    const std::vector<HostTensor> inputs = inputs_for(set);
    std::vector<std::vector<float>> outputs = {std::vector<float>(replayer.output_elements(0)),
                                               std::vector<float>(replayer.output_elements(1))};
    replayer.run_host({inputs[0].data.data(), inputs[1].data.data()},
                      {outputs[0].data(), outputs[1].data()}, nullptr);
    EngineOptions engine_options;
    engine_options.layout = tensor_layout_from_string(replayer.info().layout);
    for (int m = 0; m < 2; ++m) {
        const HostTensor expected = alone(set, m, inputs, engine_options);
        CHECK(max_abs_diff(outputs[size_t(m)], expected.data) <=
              tolerance_for(Precision::Tf32, expected.data));
    }
    // One input and one output is not a set's call: a clear error, not a wrong buffer.
    std::vector<float> one(replayer.output_elements(0));
    CHECK_THROWS_WITH(replayer.run_host(inputs[0].data.data(), one.data(), nullptr),
                      Catch::Contains("takes 2 and returns 2"));
    // The same models in the other order are another key.
    CHECK_THROWS(Replayer(std::vector<std::string>{"squeezenet1_1", "googlenet"}, options));
}
