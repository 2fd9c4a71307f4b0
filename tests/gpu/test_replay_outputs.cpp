// [gpu] Every output of a model with several (a detector backbone's FPN levels) and of a model
// set of such models through the Replayer: output_count() counts them all, run_host(),
// output_buffer(k) and native_output_buffer(k) give each one, each equals the CPU reference,
// `iostune replay --validate`'s check (validate_replay) passes, and a corrupted output k fails
// it naming output k.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "iostune/replay.h"
#include "replay/model_spec.h"
#include "replay/replay_validation.h"
#include "search/baselines.h"
#include "search/model_set_baselines.h"
#include "src/engine/cuda_check.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/output_agreement.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/tensor_layout.h"
#include "src/weights.h"
#include "tests/gpu/engine_fixtures.h"
#include "tests/gpu/onnx_fixtures.h"
#include "tests/search/test_graphs.h"
#include "tuning/tuning_job.h"
#include "tests/gpu/test_dir.h"

using namespace iostune;
namespace fs = std::filesystem;

namespace {

fs::path test_dir() {
    return test::process_temp_dir("iostune_test_replay_outputs");
}

// test::fpn_like (outputs p2, p3, p4) with seeded weights, written as a model file.
std::string write_fpn_model(const std::string& name, uint64_t seed) {
    Graph g = test::fpn_like(name);
    init_random_weights(g, seed);
    const fs::path json = test_dir() / (name + ".json");
    save_model(g, json.string(), (test_dir() / (name + ".bin")).string());
    return json.string();
}

ReplayOptions given(const std::string& name, const Schedule& schedule, Precision precision) {
    ReplayOptions options;
    options.schedule_source = "given";
    options.schedule_name = name;
    options.schedule_json = schedule_to_json(schedule).dump();
    options.precision = to_string(precision);
    return options;
}

// The model's inputs as validate_replay seeds them.
std::vector<HostTensor> inputs_for(const Graph& graph) {
    std::vector<HostTensor> inputs;
    for (int k = 0; k < graph.input_count(); ++k)
        inputs.push_back(random_input(graph.input_shape(k), 11 + uint64_t(k)));
    return inputs;
}

// run_host with every output; the outputs in the graph's shapes.
std::vector<HostTensor> run_all(Replayer& replayer, const Graph& graph,
                                const std::vector<HostTensor>& inputs) {
    std::vector<HostTensor> outputs;
    for (int id : graph.outputs()) outputs.emplace_back(graph.op(id).output, std::nanf(""));
    std::vector<const float*> in;
    for (const HostTensor& t : inputs) in.push_back(t.data.data());
    std::vector<float*> out;
    for (HostTensor& t : outputs) out.push_back(t.data.data());
    replayer.run_host(in, out, nullptr);
    return outputs;
}

// How far an output may be from the fp32 CPU reference (or PyTorch's): the zoo models' bound,
// at least 1e-2 in TF32/fp16. An output that is another level's, stale or missing errs by ~1.
double reference_bound(Precision precision) {
    return precision == Precision::Fp32 ? test::kFp32Tolerance
                                        : std::max(test::model_error_bound(precision), 1e-2);
}

// Each output against the fp32 CPU reference of the graph (a set's: each model's own).
void check_against_reference(const std::vector<HostTensor>& outputs, const Graph& graph,
                             const std::vector<HostTensor>& inputs, Precision precision) {
    const std::vector<HostTensor> reference = reference_run_outputs(graph, inputs);
    REQUIRE(outputs.size() == reference.size());
    for (size_t k = 0; k < outputs.size(); ++k) {
        CAPTURE(describe_output(graph, int(k)));
        CHECK(test::relative_error(outputs[k], reference[k]) < reference_bound(precision));
    }
}

// Output k made wrong on purpose: validation must fail naming it.
void check_corruption_is_named(const Graph& graph, const std::vector<HostTensor>& replayed,
                               const std::vector<HostTensor>& sequential, Precision precision) {
    for (size_t k = 0; k < replayed.size(); ++k) {
        std::vector<HostTensor> corrupted = replayed;
        corrupted[k].data[corrupted[k].data.size() / 2] +=
            float(1 + 2 * output_tolerance(sequential[k], precision));
        CHECK_THROWS_WITH(compare_with_sequential(graph, corrupted, sequential, precision),
                          Catch::Contains("validation failed: the replayed schedule's " +
                                          describe_output(graph, int(k))));
    }
}

}  // namespace

TEST_CASE("a model with three outputs replays, validates and names a corrupted output",
          "[gpu][replay][outputs]") {
    const Precision precision = GENERATE(Precision::Fp32, Precision::Tf32, Precision::Fp16);
    CAPTURE(to_string(precision));
    const std::string model = write_fpn_model("fpn_like", 5);
    const Graph graph = load_model_spec(model, 1);
    REQUIRE(graph.output_count() == 3);
    const std::vector<HostTensor> inputs = inputs_for(graph);

    Replayer replayer(model, given("greedy", make_baseline("greedy", graph), precision));
    const ReplayInfo& info = replayer.info();
    REQUIRE(replayer.output_count() == 3);
    CHECK(info.output_names == std::vector<std::string>{"p2", "p3", "p4"});
    CHECK(info.output_models == std::vector<int>{0, 0, 0});
    CHECK(info.output_shapes ==
          std::vector<std::array<int, 4>>{{1, 8, 16, 16}, {1, 8, 8, 8}, {1, 8, 4, 4}});
    for (int k = 0; k < 3; ++k) {
        CHECK(replayer.output_index(0, k) == k);
        const Shape& shape = graph.op(graph.outputs()[size_t(k)]).output;
        CHECK(replayer.output_elements(k) == size_t(shape.elements()));
    }
    CHECK_THROWS_WITH(replayer.output_index(0, 3), Catch::Contains("has 3 output(s)"));
    // The one-output form cannot hold three outputs: refused, saying how many there are.
    std::vector<float> one(replayer.output_elements(0));
    CHECK_THROWS_WITH(replayer.run_host(inputs[0].data.data(), one.data(), nullptr),
                      Catch::Contains("takes 1 and returns 3"));

    const std::vector<HostTensor> outputs = run_all(replayer, graph, inputs);
    check_against_reference(outputs, graph, inputs, precision);
    // output_buffer(k) holds what run_host copied out.
    for (int k = 0; k < 3; ++k) {
        std::vector<float> device(replayer.output_elements(k));
        IOSTUNE_CUDA_CHECK(cudaMemcpy(device.data(), replayer.output_buffer(k),
                                      device.size() * sizeof(float), cudaMemcpyDeviceToHost),
                           "reading output_buffer");
        CHECK(device == outputs[size_t(k)].data);
    }

    const ReplayValidation v = validate_replay(replayer, graph);
    CHECK(v.outputs == 3);
    CHECK(v.max_abs_diff <= v.tolerance);
    EngineOptions options;
    options.precision = precision;
    options.layout = tensor_layout_from_string(info.layout);
    check_corruption_is_named(graph, outputs, sequential_outputs(graph, inputs, options),
                              precision);
}

TEST_CASE("native I/O gives every output in the engine's own storage",
          "[gpu][replay][outputs]") {
    // Strict fp32 in NCHW: the engine's own storage is the caller's float NCHW, so each native
    // output compares with the reference directly.
    const std::string model = write_fpn_model("fpn_like", 5);
    const Graph graph = load_model_spec(model, 1);
    ReplayOptions options = given("greedy", make_baseline("greedy", graph), Precision::Fp32);
    options.native_io = true;
    options.layout = "nchw";
    Replayer replayer(model, options);
    REQUIRE(replayer.info().storage == "float");
    REQUIRE(replayer.info().layout == "nchw");
    const std::vector<HostTensor> inputs = inputs_for(graph);
    IOSTUNE_CUDA_CHECK(cudaMemcpy(replayer.native_input_buffer(), inputs[0].data.data(),
                                  inputs[0].data.size() * sizeof(float), cudaMemcpyHostToDevice),
                       "filling native_input_buffer");
    replayer.launch(nullptr);
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "waiting for the launch");
    std::vector<HostTensor> outputs;
    for (int k = 0; k < replayer.output_count(); ++k) {
        HostTensor out(graph.op(graph.outputs()[size_t(k)]).output);
        REQUIRE(out.data.size() == replayer.output_elements(k));
        IOSTUNE_CUDA_CHECK(cudaMemcpy(out.data.data(), replayer.native_output_buffer(k),
                                      out.data.size() * sizeof(float), cudaMemcpyDeviceToHost),
                           "reading native_output_buffer");
        outputs.push_back(std::move(out));
    }
    REQUIRE(outputs.size() == 3);
    check_against_reference(outputs, graph, inputs, Precision::Fp32);
    CHECK_THROWS_WITH(validate_replay(replayer, graph), Catch::Contains("native_io"));
}

TEST_CASE("a set of multi-output models replays every output of every model",
          "[gpu][replay][outputs][model_set]") {
    const Precision precision = GENERATE(Precision::Tf32, Precision::Fp16);
    const bool shared = GENERATE(true, false);
    CAPTURE(to_string(precision), shared);
    const std::vector<std::string> models = {write_fpn_model("fpn_a", 5),
                                             write_fpn_model("fpn_b", 6)};
    const Graph set = load_models(models, 1, shared);
    REQUIRE(set.output_count() == 6);
    const std::vector<HostTensor> inputs = inputs_for(set);
    for (const auto& [name, schedule] : std::vector<std::pair<std::string, Schedule>>{
             {"streams", member_streams_schedule(set)}, {"greedy", make_baseline("greedy", set)}}) {
        CAPTURE(name);
        ReplayOptions options = given(name, schedule, precision);
        options.shared_input = shared;
        Replayer replayer(models, options);
        REQUIRE(replayer.output_count() == 6);
        CHECK(replayer.info().output_models == std::vector<int>{0, 0, 0, 1, 1, 1});
        CHECK(replayer.info().output_names[4] == "m1/p3");
        CHECK(replayer.output_index(1, 1) == 4);
        const std::vector<HostTensor> outputs = run_all(replayer, set, inputs);
        check_against_reference(outputs, set, inputs, precision);
        // The two models have different weights: their outputs differ.
        CHECK(test::relative_error(outputs[0], outputs[3]) > 1e-2);
        const ReplayValidation v = validate_replay(replayer, set);
        CHECK(v.outputs == 6);
        if (name == "streams") {
            EngineOptions engine_options;
            engine_options.precision = precision;
            engine_options.layout = tensor_layout_from_string(replayer.info().layout);
            check_corruption_is_named(set, outputs, sequential_outputs(set, inputs, engine_options),
                                      precision);
        }
    }
}

TEST_CASE("a measured search of a multi-output model stores a schedule the Replayer validates",
          "[gpu][replay][outputs]") {
    const std::string model = write_fpn_model("fpn_searched", 7);
    const std::string db = (test_dir() / "outputs.db").string();
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
    TuningOptions tuning;
    tuning.cost = CostChoice::Measured;
    tuning.db_path = db;
    tuning.search.progress = false;
    const Graph graph = load_model_spec(model, 1);
    const TuningSummary summary = run_tuning_job(graph, tuning, [](const std::string&) {});
    REQUIRE(summary.measured_ms);
    REQUIRE(*summary.max_abs_diff <= *summary.tolerance);  // the contest checked all 3 outputs

    ReplayOptions options;
    options.db_path = db;
    Replayer replayer(model, options);
    CHECK(replayer.info().schedule_id == summary.best_schedule_id);
    REQUIRE(replayer.output_count() == 3);
    const std::vector<HostTensor> inputs = inputs_for(graph);
    check_against_reference(run_all(replayer, graph, inputs), graph, inputs, Precision::Tf32);
    CHECK(validate_replay(replayer, graph).outputs == 3);
}

TEST_CASE("the Faster R-CNN FPN backbone from ONNX replays its five outputs as PyTorch computes "
          "them",
          "[gpu][replay][outputs][onnx][fixtures]") {
    const std::optional<nlohmann::json> manifest = test::onnx_fixture_manifest();
    if (!manifest) return;
    const fs::path dir = test::onnx_fixture_dir();
    const nlohmann::json entry = test::onnx_fixture(*manifest, "fasterrcnn_fpn_backbone");
    const std::string model = (dir / entry["onnx"].get<std::string>()).string();
    const int batch = entry["batch"].get<int>();
    const Graph graph = load_model_spec(model, batch);
    REQUIRE(graph.output_count() == 5);
    const HostTensor input = test::fixture_input(entry, graph.input_shape());

    const Precision precision = GENERATE(Precision::Tf32, Precision::Fp16);
    CAPTURE(to_string(precision));
    ReplayOptions options = given("greedy", make_baseline("greedy", graph), precision);
    options.batch = batch;
    Replayer replayer(model, options);
    REQUIRE(replayer.output_count() == 5);
    const std::vector<HostTensor> outputs = run_all(replayer, graph, {input});
    for (size_t k = 0; k < 5; ++k) {
        CAPTURE(describe_output(graph, int(k)));
        const auto& d = replayer.info().output_shapes[k];
        CHECK(std::vector<int>(d.begin(), d.end()) ==
              entry["output_shapes"][k].get<std::vector<int>>());
        HostTensor pytorch(outputs[k].shape);
        pytorch.data = test::read_floats(dir / entry["outputs"][k].get<std::string>());
        REQUIRE(pytorch.data.size() == outputs[k].data.size());
        CHECK(test::relative_error(outputs[k], pytorch) < reference_bound(precision));
    }
    CHECK(validate_replay(replayer, graph).outputs == 5);
}

