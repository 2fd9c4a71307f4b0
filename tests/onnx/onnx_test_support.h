// Shared helpers of the ONNX suite: the PyTorch fixtures (manifest, raw float32 files) and the
// error measure used against PyTorch; with the builder of ONNX models in C++ for the cases that
// need no PyTorch (onnx_model_builder.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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
