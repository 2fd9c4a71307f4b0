// Resolves the --model NAME|FILE argument every model-taking command shares: a zoo model name
// or a model file (.json, .onnx), returned as a Graph at the requested batch size.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "src/graph.h"

namespace iostune::cli {

constexpr const char* kModelOptionHelp =
    "zoo model name (see `iostune models`) or a model file (.json, or .onnx imported on the fly)";

// Adds the required --model option to `command`, stored in `spec`.
CLI::Option* add_model_option(CLI::App* command, std::string& spec);

// A zoo model built at `batch`, or a model file loaded (with its weights, if it names a weights
// file) and re-inferred at `batch`. Throws iostune::Error for an unknown name, a missing or
// invalid file, or an unsupported file type.
Graph load_model_source(const std::string& spec, int batch = 1);

}  // namespace iostune::cli
