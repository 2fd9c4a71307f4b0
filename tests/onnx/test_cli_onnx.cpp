// The commands around ONNX: `iostune import` writes a JSON model whose weights are the ONNX
// initializers; `iostune run` accepts .onnx and .json models, reads raw float32 input, writes
// raw float32 output and refuses a wrongly sized input.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/model_json.h"
#include "src/onnx/onnx_import.h"
#include "tests/onnx/onnx_test_support.h"

#ifdef IOSTUNE_EXE

namespace {

using namespace iostune;
using namespace iostune::onnx_test;
namespace fs = std::filesystem;

struct Result {
    int status = 0;
    std::string output;  // stdout and stderr
};

Result iostune_cli(const std::string& args) {
    Result r;
    FILE* pipe = popen(fmt::format("'{}' {} 2>&1", IOSTUNE_EXE, args).c_str(), "r");
    REQUIRE(pipe);
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) r.output.append(buffer, n);
    r.status = pclose(pipe);
    return r;
}

fs::path work_dir() {
    const fs::path dir = fs::path(IOSTUNE_BINARY_DIR) / "tests" / "onnx_cli";
    fs::create_directories(dir);
    return dir;
}

}  // namespace

TEST_CASE("iostune import + run --backend cpu reproduce PyTorch's output", "[onnx][pytorch][cli]") {
    if (!load_manifest()) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return;
    }
    const fs::path dir = work_dir();
    const std::string onnx = fixture_path("branchy_opset17.onnx");
    const std::string json = (dir / "branchy.json").string();
    const Result imported = iostune_cli(fmt::format("import '{}' -o '{}'", onnx, json));
    INFO(imported.output);
    REQUIRE(imported.status == 0);
    CHECK(fs::exists(dir / "branchy.bin"));

    // The JSON round trip keeps the initializers bit for bit.
    const Graph from_onnx = import_onnx_file(onnx);
    const Graph from_json = load_model(json);
    CHECK(fingerprint(from_json) == fingerprint(from_onnx));
    CHECK(from_json.params().size() == from_onnx.params().size());
    for (int id = 0; id < from_onnx.size(); ++id)
        for (size_t t = 0; t < from_onnx.params_of(id).size(); ++t)
            CHECK(from_json.params_of(id)[t].values == from_onnx.params_of(id)[t].values);

    // Both the .onnx and the imported .json run; the fixture's batch is 3.
    const std::vector<float> expected = read_floats(fixture_path("branchy_opset17.output.bin"));
    for (const std::string& model : {onnx, json}) {
        const std::string out = (dir / "out.bin").string();
        const Result run =
            iostune_cli(fmt::format("run --model '{}' --batch 3 --input '{}' --output '{}'", model,
                                    fixture_path("branchy_opset17.input.bin"), out));
        INFO(run.output);
        REQUIRE(run.status == 0);
        const std::vector<float> got = read_floats(out);
        REQUIRE(got.size() == expected.size());
        CHECK(relative_error(got, expected) <= 1e-4);
    }
}

TEST_CASE("iostune run writes every output of a model with several, one after another",
          "[onnx][pytorch][cli]") {
    const auto manifest = load_manifest();
    if (!manifest) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return;
    }
    // The Faster R-CNN FPN backbone: five feature maps.
    const auto entry = manifest_entry(*manifest, "fasterrcnn_fpn_backbone");
    REQUIRE(entry);
    std::vector<float> expected;
    for (const auto& file : (*entry)["outputs"]) {
        const std::vector<float> part = read_floats(fixture_path(file.get<std::string>()));
        expected.insert(expected.end(), part.begin(), part.end());
    }
    const std::string out = (work_dir() / "fpn_out.bin").string();
    const Result run = iostune_cli(fmt::format(
        "run --model '{}' --batch 1 --input '{}' --output '{}'",
        fixture_path("fasterrcnn_fpn_backbone.onnx"),
        fixture_path("fasterrcnn_fpn_backbone.input.bin"), out));
    INFO(run.output);
    REQUIRE(run.status == 0);
    CHECK_THAT(run.output, Catch::Matchers::Contains("1x256x16x16 + 1x256x8x8 + 1x256x4x4 + "
                                                     "1x256x2x2 + 1x256x1x1"));
    const std::vector<float> got = read_floats(out);
    REQUIRE(got.size() == expected.size());
    CHECK(relative_error(got, expected) <= 1e-4);

    // `iostune import` names every output's shape, and its JSON keeps all five in order.
    const std::string json = (work_dir() / "fpn.json").string();
    const Result imported = iostune_cli(fmt::format(
        "import '{}' -o '{}'", fixture_path("fasterrcnn_fpn_backbone.onnx"), json));
    INFO(imported.output);
    REQUIRE(imported.status == 0);
    CHECK_THAT(imported.output, Catch::Matchers::Contains("outputs 1x256x16x16 + 1x256x8x8 + "
                                                          "1x256x4x4 + 1x256x2x2 + 1x256x1x1"));
    CHECK(load_model(json).outputs() ==
          import_onnx_file(fixture_path("fasterrcnn_fpn_backbone.onnx")).outputs());
}

TEST_CASE("iostune run refuses an input of the wrong size and a non-ONNX .onnx file",
          "[onnx][cli]") {
    const fs::path dir = work_dir();
    ModelBuilder b(0, 2, 4, 4);
    b.initializer("w", {3, 2, 1, 1}, ramp(6));
    b.node("Conv", {"x", "w"}, "y");
    const std::string model = (dir / "tiny.onnx").string();
    { std::ofstream(model, std::ios::binary) << b.bytes(); }

    // A seeded random input needs no file: 2 x 3 x 4 x 4 floats out.
    const std::string out = (dir / "tiny_out.bin").string();
    const Result seeded = iostune_cli(fmt::format("run -m '{}' -b 2 -o '{}'", model, out));
    INFO(seeded.output);
    REQUIRE(seeded.status == 0);
    CHECK(fs::file_size(out) == 2 * 3 * 4 * 4 * sizeof(float));

    const std::string input = (dir / "tiny_in.bin").string();
    { std::ofstream(input, std::ios::binary) << std::string(2 * 4 * 4 * 4, '\0'); }  // batch 1
    const Result wrong =
        iostune_cli(fmt::format("run -m '{}' -b 2 -i '{}' -o '{}'", model, input, out));
    CHECK(wrong.status != 0);
    CHECK_THAT(wrong.output, Catch::Matchers::Contains("128 bytes") &&
                                 Catch::Matchers::Contains("2x2x4x4") &&
                                 Catch::Matchers::Contains("256 bytes"));

    const std::string text = (dir / "text.onnx").string();
    { std::ofstream(text) << "not a model\n"; }
    const Result bad =
        iostune_cli(fmt::format("import '{}' -o '{}'", text, (dir / "x.json").string()));
    CHECK(bad.status != 0);
    CHECK_THAT(bad.output,
               Catch::Matchers::Contains("iostune: error:") && Catch::Matchers::Contains("ONNX"));
}

#endif  // IOSTUNE_EXE
