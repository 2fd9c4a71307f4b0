// Several models as one graph (HiveMind's "model batch"): an ensemble, A/B variants of one
// model, the models of a pipeline that all see the same frame. The members' ops are appended one
// model after another (member i's ops are one contiguous id range, GraphMember), so the combined
// graph is an ordinary Graph with one output per member, and everything that schedules, runs or
// stores a graph (search, engine, store, replay) takes it as it is. With shared inputs every
// member reads the one graph input; with separate inputs member i reads graph input i.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/graph.h"

namespace iostune {

enum class SetInputs { Shared, Separate };
const char* to_string(SetInputs inputs);  // "shared", "separate"

// The set's name: the members' names joined by '+', e.g. "resnet50+resnet50".
std::string model_set_name(const std::vector<Graph>& models);

// Combines `models` (at least two, one batch size). A member without weights gets seeded random
// ones, seed weight_seed + i, so two copies of one zoo model are two different models (as two
// fine-tuned variants would be); members with weights keep theirs. Op names become
// "m<i>/<name>". Throws iostune::Error naming the member for mismatched batches, or for
// shared inputs of different shapes.
Graph combine_models(const std::vector<Graph>& models, SetInputs inputs, uint64_t weight_seed = 1);

// Shared or separate, as combined; nullopt for a graph that is not a model set.
std::optional<SetInputs> set_inputs_of(const Graph& graph);

// Member `index` of a combined graph as the standalone model it was (its ops, weights, input
// shape and names), to run it alone.
Graph member_graph(const Graph& set, int index);

}  // namespace iostune
