// iostune_model: a model as the C API hands it around. The spec (zoo name or file) is kept
// because the Replayer and the tuning job load models by spec, one graph per batch size.
#pragma once

#include <string>

#include "src/graph.h"

struct iostune_model {
    std::string spec;
    int batch = 1;
    iostune::Graph graph;  // at `batch`, fused as search and replay run it
    std::string name;
    std::string fingerprint;

    // The graph at another batch size, loaded as `iostune search --batch` loads it.
    iostune::Graph at_batch(int other) const;
};

namespace iostune::capi {

// `model`, or a bad-input error naming `call` when it is NULL.
const iostune_model& model_ref(const iostune_model* model, const char* call);

}  // namespace iostune::capi
