// Shared helpers of the ONNX suite: the PyTorch fixtures (manifest, raw float32 files) and the
// error measure used against PyTorch; with the builder of ONNX models in C++ for the cases that
// need no PyTorch (onnx_model_builder.h).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/onnx/onnx_import.h"
#include "src/tensor.h"
#include "tests/onnx/onnx_model_builder.h"

namespace iostune::onnx_test {

inline std::string fixture_path(const std::string& file) {
    return std::string(IOSTUNE_ONNX_FIXTURES) + "/" + file;
}

// The fixture manifest, or nullopt (after a Catch2 WARN at the call site) when the fixtures were
// skipped because no Python with torch was available.
inline std::optional<nlohmann::json> load_manifest() {
    std::ifstream file(fixture_path("manifest.json"));
    if (!file) return std::nullopt;
    nlohmann::json doc = nlohmann::json::parse(file);
    if (doc.value("skipped", true)) return std::nullopt;
    return doc;
}

inline std::optional<nlohmann::json> manifest_entry(const nlohmann::json& manifest,
                                                    const std::string& name) {
    for (const auto& entry : manifest["models"])
        if (entry["name"] == name) return entry;
    return std::nullopt;
}

inline std::vector<float> read_floats(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    std::vector<float> values(bytes.size() / sizeof(float));
    std::copy(bytes.begin(), bytes.begin() + std::ptrdiff_t(values.size() * sizeof(float)),
              reinterpret_cast<char*>(values.data()));
    return values;
}

// A fixture imported as the CI exported it: the graph at the manifest's batch with PyTorch's
// weights, and PyTorch's input.
struct ImportedFixture {
    Graph graph;
    HostTensor input;
};

// Imports manifest entry `entry`, checking its input shape and that its weights were loaded.
inline ImportedFixture import_fixture(const nlohmann::json& entry) {
    OnnxImportOptions options;
    options.batch = entry["batch"].get<int>();
    Graph graph = import_onnx_file(fixture_path(entry["onnx"]), options);
    const auto in_shape = entry["input_shape"].get<std::vector<int>>();
    REQUIRE(graph.input_shape() == Shape{in_shape[0], in_shape[1], in_shape[2], in_shape[3]});
    REQUIRE(graph.weights_state() == WeightsState::Loaded);
    HostTensor input(graph.input_shape());
    input.data = read_floats(fixture_path(entry["input"]));
    REQUIRE(input.data.size() == size_t(graph.input_shape().elements()));
    return {std::move(graph), std::move(input)};
}

// max |got - want| / max |want|: relative to the output's scale, so entries near zero do not
// dominate (the measure the 1e-4 bound is stated in).
inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
        worst = std::max(worst, std::fabs(double(got[i]) - double(want[i])));
        scale = std::max(scale, std::fabs(double(want[i])));
    }
    return scale > 0.0 ? worst / scale : worst;
}

}  // namespace iostune::onnx_test
