// Resolves a model argument: a zoo model name, an iostune model file (.json, with the weights
// file it names) or an ONNX file (.onnx, imported on the fly with its initializers as weights),
// at a given batch size. The one model loader of the product: the Replayer, the tuning job and
// every CLI command that takes --model go through it.
#pragma once

#include <string>
#include <vector>

#include "src/fusion.h"
#include "src/graph.h"

namespace iostune {

// The model is returned with its epilogues fused (src/fusion.h) unless `fusion` is None: search,
// replay, run and profile all load it here, so they schedule, run and key (fingerprint) the
// same fused graph. Throws iostune::Error for an unknown name (listing the zoo), a missing or
// invalid file, an ONNX model the importer refuses, or a file that is neither .json nor .onnx.
Graph load_model_spec(const std::string& spec, int batch, Fusion fusion = Fusion::Epilogues);

// One model (one spec), or a model set (model_set.h) of several: every model of the set reads
// one shared input (`shared_input`, all input shapes equal) or its own; each model is fused
// before the set is combined. Errors name the spec.
Graph load_models(const std::vector<std::string>& specs, int batch, bool shared_input);

}  // namespace iostune
