// Several models as one graph (HiveMind's "model batch"): an ensemble, A/B variants of one
// model, the models of a pipeline that all see the same frame. The members' ops are appended one
// model after another (member i's ops are one contiguous id range, GraphMember), so the combined
// graph is an ordinary Graph whose outputs are its members' outputs, member after member, and
// everything that schedules, runs or stores a graph (search, engine, store, replay) takes it as
// it is. With shared inputs every member reads the one graph input; with separate inputs member
// i reads graph input i.
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
// "m<i>/<name>". A member may have several outputs (a detector backbone's FPN levels): the set's
// outputs are every member's outputs, member after member. Throws iostune::Error naming the
// member for mismatched batches, or for shared inputs of different shapes.
Graph combine_models(const std::vector<Graph>& models, SetInputs inputs, uint64_t weight_seed = 1);

// Shared or separate, as combined; nullopt for a graph that is not a model set.
std::optional<SetInputs> set_inputs_of(const Graph& graph);

// Member `index` of a combined graph as the standalone model it was (its ops, weights, input
// shape and names), to run it alone.
Graph member_graph(const Graph& set, int index);

// Where graph output k comes from: output `member_output` of model `member` (0 for a graph
// that is one model), produced by op `op`.
struct GraphOutput {
    int op = 0;
    int member = 0;
    int member_output = 0;
    bool operator==(const GraphOutput&) const = default;
};
// One entry per graph output, in the graph's order (a set's: member after member, each member's
// outputs in its own order).
std::vector<GraphOutput> output_origins(const Graph& graph);
// The graph output index of model `member`'s output `member_output`; throws iostune::Error
// naming what exists when there is no such output.
int output_index(const Graph& graph, int member, int member_output);
// Output `index` for messages: "output 2 ('fpn/p4')", or in a set
// "output 3 ('m1/fc', output 0 of model 1 'resnet50')"; op names stand for the output's name.
std::string describe_output(const Graph& graph, int index);
// As describe_output, but a single-output graph's only output is "output of '<graph name>'".
std::string name_output(const Graph& graph, int index);

}  // namespace iostune
