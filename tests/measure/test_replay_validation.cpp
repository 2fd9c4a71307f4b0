// What `iostune replay --validate` compares (replay/replay_validation.h), without a GPU: every
// output of a model with several outputs and of a model set of such models, against the
// sequential outputs; a corrupted output k fails naming output k.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "replay/model_spec.h"
#include "replay/replay_validation.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/output_agreement.h"
#include "src/reference/reference.h"
#include "src/weights.h"
#include "tests/search/test_graphs.h"

using namespace iostune;

namespace {

std::vector<HostTensor> reference_outputs(const Graph& graph) {
    std::vector<HostTensor> inputs;
    for (int k = 0; k < graph.input_count(); ++k)
        inputs.push_back(random_input(graph.input_shape(k), 11 + uint64_t(k)));
    return reference_run_outputs(graph, inputs);
}

Graph fpn_with_weights(const std::string& name, uint64_t seed) {
    Graph g = test::fpn_like(name);
    init_random_weights(g, seed);
    return g;
}

}  // namespace

TEST_CASE("output agreement: the precision's tolerance scaled to the output, NaN fails",
          "[measure][validate]") {
    HostTensor reference(Shape{1, 2, 1, 1});
    reference.data = {4.0f, -8.0f};
    const double tolerance = schedule_tolerance(Precision::Tf32) * 8.0;
    CHECK(output_tolerance(reference, Precision::Tf32) == tolerance);
    HostTensor close = reference;
    close.data[1] += float(tolerance / 2);
    CHECK(output_agreement(close, reference, Precision::Tf32).agrees());
    HostTensor far = reference;
    far.data[0] += float(tolerance * 2);
    CHECK_FALSE(output_agreement(far, reference, Precision::Tf32).agrees());
    CHECK(output_agreement(far, reference, Precision::Bf16).agrees());  // a looser precision
    HostTensor nan = reference;
    nan.data[0] = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(output_agreement(nan, reference, Precision::Bf16).agrees());
    CHECK_THROWS_WITH(output_agreement(HostTensor(Shape{1, 3, 1, 1}), reference, Precision::Tf32),
                      Catch::Contains("1x3x1x1") && Catch::Contains("1x2x1x1"));
}

TEST_CASE("a sequential reference that is not finite is the model's overflow, not a schedule's "
          "error", "[measure][validate]") {
    HostTensor reference(Shape{1, 3, 1, 1});
    reference.data = {1.0f, 2.0f, 3.0f};
    CHECK_NOTHROW(require_finite_reference(reference, Precision::Fp16, "output of 'm'"));
    reference.data[1] = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH(require_finite_reference(reference, Precision::Fp16, "output of 'm'"),
                      Catch::Contains("output of 'm' holds an infinity") &&
                          Catch::Contains("1 of 3 values") && Catch::Contains("65504") &&
                          Catch::Contains("try --precision bf16 or tf32"));
    // Validation says so before comparing: the replayed output is fine, the reference is not.
    const Graph graph = fpn_with_weights("fpn_like", 3);
    std::vector<HostTensor> sequential = reference_outputs(graph);
    const std::vector<HostTensor> replayed = sequential;
    sequential[2].data[0] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(compare_with_sequential(graph, replayed, sequential, Precision::Tf32),
                      Catch::Contains("sequential schedule's output 2") &&
                          Catch::Contains("holds NaN") && Catch::Contains("check the model"));
}

TEST_CASE("validation compares every output of a multi-output model and names a bad one",
          "[measure][validate]") {
    const Graph graph = fpn_with_weights("fpn_like", 3);
    const std::vector<HostTensor> sequential = reference_outputs(graph);
    REQUIRE(sequential.size() == 3);
    const ReplayValidation v =
        compare_with_sequential(graph, sequential, sequential, Precision::Tf32);
    CHECK(v.outputs == 3);
    CHECK(v.max_abs_diff == 0);

    const char* names[] = {"p2", "p3", "p4"};
    for (int k = 0; k < 3; ++k) {
        CAPTURE(k);
        std::vector<HostTensor> replayed = sequential;
        // Beyond even bf16's rounding.
        replayed[size_t(k)].data.back() +=
            float(1 + 2 * output_tolerance(sequential[size_t(k)], Precision::Bf16));
        CHECK_THROWS_WITH(
            compare_with_sequential(graph, replayed, sequential, Precision::Bf16),
            Catch::Contains(fmt::format("the replayed schedule's output {} ('{}') differs from "
                                        "the sequential schedule's",
                                        k, names[k])));
        // A small difference is within the tolerance, and reported as the closest output.
        replayed[size_t(k)].data.back() = sequential[size_t(k)].data.back() +
                                          float(output_tolerance(sequential[size_t(k)],
                                                                 Precision::Tf32) / 4);
        const ReplayValidation close =
            compare_with_sequential(graph, replayed, sequential, Precision::Tf32);
        CHECK(close.closest == k);
        CHECK(close.max_abs_diff > 0);
    }
    std::vector<HostTensor> nan = sequential;
    nan[2].data[0] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(compare_with_sequential(graph, nan, sequential, Precision::Bf16),
                      Catch::Contains("output 2 ('p4')"));
    const std::vector<HostTensor> first_only = {sequential[0]};
    CHECK_THROWS_WITH(compare_with_sequential(graph, first_only, sequential, Precision::Tf32),
                      Catch::Contains("1 replayed and 3 sequential outputs"));
}

TEST_CASE("validation of a set of multi-output models names the model of a bad output",
          "[measure][validate]") {
    const Graph set = combine_models({fpn_with_weights("a", 3), fpn_with_weights("b", 4)},
                                     SetInputs::Separate);
    const std::vector<HostTensor> sequential = reference_outputs(set);
    REQUIRE(sequential.size() == 6);
    CHECK(compare_with_sequential(set, sequential, sequential, Precision::Fp16).outputs == 6);
    std::vector<HostTensor> replayed = sequential;
    const int k = output_index(set, 1, 1);  // b's p3
    CHECK(k == 4);
    replayed[size_t(k)].data[0] -=
        float(1 + 2 * output_tolerance(sequential[size_t(k)], Precision::Fp16));
    CHECK_THROWS_WITH(compare_with_sequential(set, replayed, sequential, Precision::Fp16),
                      Catch::Contains("output 4 ('m1/p3', output 1 of model 1 'b') differs from "
                                      "that model's sequential schedule run alone"));
}

TEST_CASE("the replay's model loader keeps every output of multi-output models and sets",
          "[measure][validate]") {
    // What the Replayer builds from model files (replay/model_spec.h, epilogues fused).
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "iostune_test_replay_validation";
    fs::create_directories(dir);
    std::vector<std::string> files;
    for (const char* name : {"fpn_a", "fpn_b"}) {
        files.push_back((dir / (std::string(name) + ".json")).string());
        save_model(fpn_with_weights(name, 3), files.back(),
                   (dir / (std::string(name) + ".bin")).string());
    }
    const Graph one = load_model_spec(files[0], 2);
    REQUIRE(one.output_count() == 3);
    CHECK(describe_output(one, 0) == "output 0 ('p2')");
    CHECK(describe_output(one, 2) == "output 2 ('p4')");
    CHECK(one.op(one.outputs()[1]).output == Shape{2, 8, 8, 8});
    // The fused model computes what the file's model computes, output by output.
    const std::vector<HostTensor> fused = reference_outputs(one);
    const std::vector<HostTensor> unfused =
        reference_outputs(fpn_with_weights("fpn_a", 3).with_batch(2));
    for (size_t k = 0; k < 3; ++k)
        CHECK(output_agreement(fused[k], unfused[k], Precision::Fp32).agrees());

    const Graph set = load_models(files, 1, true);
    REQUIRE(set.output_count() == 6);
    CHECK(describe_output(set, 4) == "output 4 ('m1/p3', output 1 of model 1 'fpn_b')");
    CHECK(output_index(set, 1, 2) == 5);
}
