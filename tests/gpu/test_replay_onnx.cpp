// [gpu] A schedule searched for an imported ONNX model replays with the ONNX initializers as its
// weights: the Replayer opened on the .onnx file (and on its `iostune import`-style JSON copy)
// finds the stored schedule and computes what the CPU reference computes with those weights.
#include <cuda_runtime.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "iostune/replay.h"
#include "replay/model_spec.h"
#include "tuning/tuning_job.h"
#include "src/model_json.h"
#include "src/reference/reference.h"
#include "src/weights.h"
#include "tests/onnx/onnx_model_builder.h"
#include "tests/gpu/test_dir.h"

using namespace iostune;
namespace fs = std::filesystem;

namespace {

std::vector<float> seeded_values(size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
    std::vector<float> v(n);
    for (float& x : v) x = uniform(rng);
    return v;
}

// Three parallel convolutions (something for the search to run concurrently), concatenated,
// a 1x1 convolution, global pooling and a classifier; symbolic batch, seeded initializers.
std::string write_branchy_onnx(const fs::path& dir) {
    using onnx_test::ModelBuilder;
    ModelBuilder b(0, 4, 16, 16);
    std::uint32_t seed = 7;
    auto conv = [&](const std::string& name, const std::string& in, int64_t cin, int64_t cout,
                    int64_t k) {
        b.initializer(name + "_w", {cout, cin, k, k},
                      seeded_values(size_t(cout * cin * k * k), seed++));
        b.initializer(name + "_b", {cout}, seeded_values(size_t(cout), seed++));
        auto& node = b.node("Conv", {in, name + "_w", name + "_b"}, name);
        ModelBuilder::ints(node, "kernel_shape", {k, k});
        ModelBuilder::ints(node, "pads", {k / 2, k / 2, k / 2, k / 2});
        b.node("Relu", {name}, name + "_relu");
    };
    conv("a", "x", 4, 8, 1);
    conv("b", "x", 4, 8, 3);
    conv("c", "x", 4, 8, 5);
    ModelBuilder::integer(b.node("Concat", {"a_relu", "b_relu", "c_relu"}, "cat"), "axis", 1);
    conv("d", "cat", 24, 8, 1);
    b.node("GlobalAveragePool", {"d_relu"}, "pool");
    b.node("Flatten", {"pool"}, "flat");
    b.initializer("fc_w", {10, 8}, seeded_values(80, seed++));
    b.initializer("fc_b", {10}, seeded_values(10, seed++));
    ModelBuilder::integer(b.node("Gemm", {"flat", "fc_w", "fc_b"}, "logits"), "transB", 1);

    const fs::path path = dir / "branchy_import.onnx";
    std::ofstream(path, std::ios::binary) << b.bytes();
    return path.string();
}

double l2_relative(const std::vector<float>& got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    double diff = 0, norm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
        norm += double(want[i]) * want[i];
    }
    return std::sqrt(diff / norm);
}

}  // namespace

TEST_CASE("a schedule searched for an imported .onnx model replays with its initializers",
          "[gpu][replay][onnx]") {
    const fs::path dir = test::process_temp_dir("iostune_test_replay_onnx");
    const std::string onnx = write_branchy_onnx(dir);
    const std::string db = (dir / "onnx.db").string();
    const int batch = 2;

    TuningOptions options;
    options.cost = CostChoice::Measured;
    options.db_path = db;
    options.search.progress = false;
    const Graph graph = load_model_spec(onnx, batch);
    REQUIRE(graph.weights_state() == WeightsState::Loaded);
    const TuningSummary summary = run_tuning_job(graph, options, [](const std::string&) {});
    REQUIRE(summary.measured_ms);

    // The JSON copy `iostune import` would write keys the same schedule (same name, structure).
    const std::string json = (dir / "branchy_import.json").string();
    save_model(graph, json, (dir / "branchy_import.bin").string());

    const HostTensor input = random_input(graph.input_shape(), 17);
    const HostTensor expected = reference_run(graph, input);  // fp32, the ONNX weights
    for (const std::string& model : {onnx, json}) {
        INFO(model);
        ReplayOptions replay_options;
        replay_options.db_path = db;
        replay_options.batch = batch;
        Replayer replayer(model, replay_options);
        const ReplayInfo& info = replayer.info();
        CHECK(info.schedule_id == summary.best_schedule_id);
        CHECK_FALSE(info.sequential_fallback);
        CHECK(info.fingerprint == summary.fingerprint);

        std::vector<float> output(replayer.output_elements(), std::nanf(""));
        replayer.run_host(input.data.data(), output.data(), nullptr);
        for (float v : output) REQUIRE(std::isfinite(v));
        // TF32 against the fp32 reference; other weights (e.g. seeded random ones instead of the
        // initializers) would miss by orders of magnitude.
        CHECK(l2_relative(output, expected.data) <= 1e-3);
    }
}
