// The PyTorch exports the build tree holds for [gpu] tests of imported models (target
// onnx_fixtures, written by tests/fixtures/export_torchvision.py with PyTorch's own outputs).
#pragma once

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/gpu/engine_fixtures.h"

namespace iostune::test {

// IOSTUNE_ONNX_FIXTURES, when set: fixtures exported elsewhere (on the device machine, whose
// PyTorch exports them there: the build tree's 1.9 GiB cannot travel; h100_plan.sh's
// device_fixtures). Else the build tree's.
inline std::filesystem::path onnx_fixture_dir() {
    if (const char* dir = std::getenv("IOSTUNE_ONNX_FIXTURES"); dir != nullptr && *dir != '\0')
        return dir;
    return std::filesystem::path(IOSTUNE_BINARY_DIR) / "tests" / "onnx_fixtures";
}

// The fixtures' manifest. Fails the test when it was never built (or exported); nullopt, with a
// warning, when the build skipped the fixtures (no torch for /usr/bin/python3).
inline std::optional<nlohmann::json> onnx_fixture_manifest() {
    const std::filesystem::path path = onnx_fixture_dir() / "manifest.json";
    std::ifstream file(path);
    if (!file)
        FAIL("no " << path.string()
                   << ": build the onnx_fixtures target first (cmake --build build --target "
                      "onnx_fixtures)");
    nlohmann::json manifest = nlohmann::json::parse(file);
    if (manifest.value("skipped", true)) {
        WARN("the PyTorch fixtures were skipped (no torch for /usr/bin/python3); nothing checked");
        return std::nullopt;
    }
    return manifest;
}

// The manifest's entry of model `name`; fails the test when there is none.
inline nlohmann::json onnx_fixture(const nlohmann::json& manifest, const std::string& name) {
    for (const auto& entry : manifest["models"])
        if (entry["name"] == name) return entry;
    FAIL("the fixture manifest has no " << name);
    return {};
}

// A float32 file the export wrote (an input or PyTorch's output), read whole.
inline std::vector<float> read_floats(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    REQUIRE(file);
    std::vector<float> values(size_t(file.tellg()) / sizeof(float));
    file.seekg(0);
    file.read(reinterpret_cast<char*>(values.data()),
              std::streamsize(values.size() * sizeof(float)));
    REQUIRE(file);
    return values;
}

// The input the export ran the model on, the one its PyTorch error ("torch_error") was
// measured with, shaped as `shape`.
inline HostTensor fixture_input(const nlohmann::json& entry, const Shape& shape) {
    HostTensor input(shape);
    input.data = read_floats(onnx_fixture_dir() / entry["input"].get<std::string>());
    REQUIRE(input.data.size() == size_t(shape.elements()));
    return input;
}

// How far an imported model's output may be from the CPU reference in `precision` ("tf32",
// "fp16", ...): `model_bound`, or kOwnErrorFactor times PyTorch's own error in that precision
// when the export measured it on a GPU ("torch_error") and it is larger. Deep deployed networks
// (squeeze-excitation gates, 100+ ops) carry rounding past a fixed bound in PyTorch too (the
// first fixture run on a GPU, call138: EfficientNet-B0 TF32 2.6%); the engine's error is
// judged by the scale of PyTorch's in the same precision, as the benchmarks report it.
inline constexpr double kOwnErrorFactor = 2.0;
inline double fixture_error_bound(const nlohmann::json& entry, const std::string& precision,
                                  double model_bound) {
    const auto errors = entry.find("torch_error");
    if (errors == entry.end() || !errors->contains(precision)) return model_bound;
    return std::max(model_bound, kOwnErrorFactor * (*errors)[precision].get<double>());
}

// Checks each of an imported fixture's outputs (`out`, the engine's under `plan`, of a graph of
// `ops` ops) against the reference's within fixture_error_bound; false when one is past it.
inline bool fixture_outputs_agree(const nlohmann::json& entry, const Plan& plan, int ops,
                                  const std::vector<HostTensor>& out,
                                  const std::vector<HostTensor>& ref) {
    REQUIRE(out.size() == ref.size());
    const double bound = fixture_error_bound(entry, to_string(plan.precision),
                                             model_error_bound(plan.precision));
    bool agree = true;
    for (size_t k = 0; k < out.size(); ++k) {
        const double err = relative_error(out[k], ref[k]);
        INFO(fmt::format("{} {} output {}: {} ops, relative error {:.3g} (bound {:.3g}; "
                         "PyTorch's own: {})",
                         entry["name"].get<std::string>(), label(plan), k, ops, err, bound,
                         entry.value("torch_error", nlohmann::json()).dump()));
        CHECK(err < bound);
        agree = agree && err < bound;
    }
    return agree;
}

}  // namespace iostune::test
