// The model loader of the replay library (replay/model_spec.h), which the Replayer and every
// --model option use, accepts an .onnx file: it gives the graph and the weights that
// `iostune import` writes, at the batch asked for, so a schedule searched for the .onnx model
// replays with the imported weights.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "replay/model_spec.h"
#include "src/error.h"
#include "src/fusion.h"
#include "src/model_json.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;
namespace fs = std::filesystem;

fs::path work_dir() {
    const fs::path dir = fs::path(IOSTUNE_BINARY_DIR) / "tests" / "onnx_model_loading";
    fs::create_directories(dir);
    return dir;
}

// Same structure, names, shapes and attributes (the canonical JSON), and bit-identical weights.
void check_same_model(const Graph& got, const Graph& want) {
    CHECK(graph_to_json(got) == graph_to_json(want));
    CHECK(fingerprint(got) == fingerprint(want));
    REQUIRE(got.weights_state() == WeightsState::Loaded);
    REQUIRE(want.weights_state() == WeightsState::Loaded);
    REQUIRE(got.params().size() == want.params().size());
    for (int id = 0; id < want.size(); ++id) {
        REQUIRE(got.params_of(id).size() == want.params_of(id).size());
        for (size_t t = 0; t < want.params_of(id).size(); ++t) {
            INFO("op " << id << " tensor " << t);
            CHECK(got.params_of(id)[t].dims == want.params_of(id)[t].dims);
            CHECK(got.params_of(id)[t].values == want.params_of(id)[t].values);
        }
    }
}

}  // namespace

#ifdef IOSTUNE_EXE

TEST_CASE("load_model_spec on an .onnx file gives the graph and weights of `iostune import`",
          "[onnx][pytorch][replay]") {
    const auto manifest = load_manifest();
    if (!manifest) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return;
    }
    // branchy_opset17: a symbolic batch (3 in the fixture); conv_bn: batch norm folded, batch 1.
    const std::string name = GENERATE(as<std::string>{}, "branchy_opset17", "conv_bn");
    const auto entry = manifest_entry(*manifest, name);
    REQUIRE(entry);
    const int batch = (*entry)["batch"];
    const std::string onnx = fixture_path(name + ".onnx");
    const std::string json = (work_dir() / (name + ".json")).string();
    const std::string log = (work_dir() / (name + ".import.log")).string();
    const std::string command = fmt::format("'{}' import '{}' -o '{}' --batch {} >'{}' 2>&1",
                                            IOSTUNE_EXE, onnx, json, batch, log);
    INFO(command);
    REQUIRE(std::system(command.c_str()) == 0);

    // The loader fuses epilogues (src/fusion.h); `iostune import` writes the model as given.
    const Graph imported = fuse_epilogues(load_model(json)).graph;
    const Graph loaded = load_model_spec(onnx, batch);
    CHECK(loaded.name() == name);
    CHECK(loaded.input_shape().n == batch);
    check_same_model(loaded, imported);

    // Another batch: the same model and weights, re-inferred (what a search at that batch keys).
    const Graph rebatched = load_model_spec(onnx, 5);
    CHECK(rebatched.input_shape().n == 5);
    CHECK(rebatched.output_shape().n == 5);
    check_same_model(rebatched, load_model_spec(json, 5));
}

#endif  // IOSTUNE_EXE

TEST_CASE("load_model_spec refuses a broken .onnx file and an unknown model file type",
          "[onnx][replay]") {
    const fs::path dir = work_dir();
    const std::string text = (dir / "not_a_model.onnx").string();
    { std::ofstream(text) << "not a model\n"; }
    CHECK_THROWS_WITH(load_model_spec(text, 1), Catch::Matchers::Contains("not_a_model.onnx") &&
                                                    Catch::Matchers::Contains("ONNX"));

    ModelBuilder b(1, 2, 4, 4);
    b.initializer("w", {3, 2, 1, 1}, ramp(6));
    b.node("Conv", {"x", "w"}, "y");
    const std::string other = (dir / "tiny.pb").string();
    { std::ofstream(other, std::ios::binary) << b.bytes(); }
    CHECK_THROWS_WITH(load_model_spec(other, 1),
                      Catch::Matchers::Contains("unrecognised model file type '.pb'") &&
                          Catch::Matchers::Contains(".onnx"));
    // The same bytes as .onnx load, with the batch asked for.
    const std::string tiny = (dir / "tiny.onnx").string();
    fs::copy_file(other, tiny, fs::copy_options::overwrite_existing);
    const Graph g = load_model_spec(tiny, 1);
    CHECK(g.name() == "tiny");
    CHECK(g.size() == 1);
    CHECK(g.params_of(0)[0].values == ramp(6));
    CHECK_THROWS_AS(load_model_spec(tiny, 0), Error);
}
