// The --model NAME|FILE option every model-taking command shares. The argument is resolved by
// load_model_spec() (replay/model_spec.h), the loader the replay library uses too: a zoo model
// name, an iostune model file (.json) or an ONNX file (.onnx).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "replay/model_spec.h"

namespace iostune::cli {

constexpr const char* kModelOptionHelp =
    "zoo model name (see `iostune models`) or a model file (.json, or .onnx imported on the fly)";

// Adds the required --model option to `command`, stored in `spec`.
CLI::Option* add_model_option(CLI::App* command, std::string& spec);

// --model given once, or several times for a model set (model_set.h), and --shared-input.
struct ModelSetChoice {
    std::vector<std::string> specs;
    bool shared_input = false;
};
void add_model_set_options(CLI::App* command, ModelSetChoice& choice);

}  // namespace iostune::cli
