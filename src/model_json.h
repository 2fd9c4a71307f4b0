// The JSON model format (schema documented in docs/model-format.md): export, import, and the
// structural fingerprint that keys schedules.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "src/graph.h"

namespace iostune {

// Canonical JSON of the graph. Parameters are never inlined; `weights_file` (if not empty) is
// recorded as the external raw float32 file that holds them.
nlohmann::json graph_to_json(const Graph& graph, const std::string& weights_file = "");

// Parses and validates a model. `source` names the file in error messages. Relative weight
// file paths resolve against `base_dir`.
Graph graph_from_json(const nlohmann::json& doc, const std::string& source,
                      const std::string& base_dir = ".");

// Writes FILE.json and, if the graph has weights and `weights_path` is not empty, the raw
// little-endian float32 parameters of all ops in id order to `weights_path`.
void save_model(const Graph& graph, const std::string& path, const std::string& weights_path = "");
// Reads a model file (and its weights file, if it names one). Errors name the file and the
// JSON location of the problem.
Graph load_model(const std::string& path);

// Stable 16-hex-digit fingerprint of the structure: input C/H/W, op kinds, attributes and edges
// (not names, not batch, not weights).
std::string fingerprint(const Graph& graph);

}  // namespace iostune
