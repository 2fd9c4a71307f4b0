// Telling cheaply whether a graph is the one a cost model saw last. Cost models are handed the
// same graph for every stage of a search (a hundred thousand calls), and fingerprint() formats
// the whole graph as text: about a millisecond for a 500-op model, per call. Comparing the
// structure field by field takes microseconds.
#pragma once

#include "src/graph.h"

namespace iostune {

// True when `a` and `b` agree on everything fingerprint() reads (input C/H/W, op kinds,
// attributes, inputs, cells) and on the batch size. Names and weights are not compared.
bool same_structure(const Graph& a, const Graph& b);

// A copy of `graph` without its parameters: enough to compare with same_structure() later,
// without holding a second copy of the weights.
Graph structure_of(const Graph& graph);

}  // namespace iostune
