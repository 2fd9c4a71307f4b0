// Seeded-random parameters and inputs, reproducible on every machine.
#pragma once

#include <cstdint>

#include "src/graph.h"
#include "src/tensor.h"

namespace iostune {

// Fills every op's parameters with values drawn from a fixed-seed generator, scaled (He-style,
// by fan-in) so activations keep a stable magnitude through deep models.
void init_random_weights(Graph& graph, uint64_t seed);

// A seeded input for the graph, uniform in [-1, 1).
HostTensor random_input(const Shape& shape, uint64_t seed);

}  // namespace iostune
