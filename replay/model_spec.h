// Resolves a model argument of the replay library and the tuning job: a zoo model name or an
// iostune model file (.json, with the weights file it names), at a given batch size.
#pragma once

#include <string>

#include "src/graph.h"

namespace iostune {

// Throws iostune::Error for an unknown name (listing the zoo), or a missing/invalid file.
Graph load_model_spec(const std::string& spec, int batch);

}  // namespace iostune
