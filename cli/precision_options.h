// The --precision and --layout options every command that runs a model on the GPU shares.
//   --precision fp32|tf32|fp16|bf16   (--math, its name before fp16/bf16 existed, still works)
//   --layout auto|nchw|nhwc           (auto: what the command documents; see layout_choice)
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "src/tensor_layout.h"

namespace iostune::cli {

CLI::Option* add_precision_option(CLI::App* command, std::string& precision,
                                  const std::string& help);
CLI::Option* add_layout_option(CLI::App* command, std::string& layout, const std::string& help);

// "auto" -> nullopt (the command decides), else the layout named.
std::optional<TensorLayout> layout_choice(const std::string& name);

}  // namespace iostune::cli
