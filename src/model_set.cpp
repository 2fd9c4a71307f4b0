#include "src/model_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "src/error.h"
#include "src/model_json.h"
#include "src/weights.h"

namespace iostune {

namespace {

std::string member_prefix(int index) { return fmt::format("m{}/", index); }

}  // namespace

const char* to_string(SetInputs inputs) {
    return inputs == SetInputs::Shared ? "shared" : "separate";
}

std::string model_set_name(const std::vector<Graph>& models) {
    std::string name;
    for (const Graph& g : models) name += (name.empty() ? "" : "+") + g.name();
    return name;
}

Graph combine_models(const std::vector<Graph>& models, SetInputs inputs, uint64_t weight_seed) {
    if (models.size() < 2)
        throw Error(fmt::format("a model set needs at least two models, got {}", models.size()));
    const std::string name = model_set_name(models);
    for (size_t i = 0; i < models.size(); ++i) {
        const Graph& g = models[i];
        if (!g.members().empty())
            throw Error(fmt::format("model set '{}': member {} ('{}') is a model set itself", name,
                                    i, g.name()));
        if (g.input_count() != 1)
            throw Error(fmt::format("model set '{}': member {} ('{}') has {} inputs; members "
                                    "take one input each",
                                    name, i, g.name(), g.input_count()));
        if (g.batch() != models[0].batch())
            throw Error(fmt::format("model set '{}': member {} ('{}') has batch {}, member 0 "
                                    "has {}",
                                    name, i, g.name(), g.batch(), models[0].batch()));
        const Shape& a = models[0].input_shape();
        const Shape& b = g.input_shape();
        if (inputs == SetInputs::Shared && !(a == b))
            throw Error(fmt::format(
                "model set '{}': --shared-input needs one input shape, but '{}' takes {}x{}x{} "
                "and '{}' takes {}x{}x{}; give each model its own input (drop --shared-input)",
                name, models[0].name(), a.c, a.h, a.w, g.name(), b.c, b.h, b.w));
    }

    Graph set(name, models[0].input_shape());
    std::vector<GraphMember> members;
    std::vector<std::vector<ParamTensor>> params;
    for (size_t i = 0; i < models.size(); ++i) {
        Graph model = models[i];
        if (model.weights_state() == WeightsState::Absent)
            init_random_weights(model, weight_seed + i);
        GraphMember member;
        member.name = model.name();
        member.fingerprint = fingerprint(model);
        member.first_op = set.size();
        member.input = inputs == SetInputs::Shared || i == 0 ? kGraphInput
                                                             : set.add_input(model.input_shape());
        for (const Op& op : model.ops()) {
            std::vector<int> ins;
            for (int src : op.inputs)
                ins.push_back(is_graph_input(src) ? member.input : src + member.first_op);
            set.add(op.kind, op.attrs, std::move(ins), member_prefix(int(i)) + op.name, op.cell);
        }
        member.end_op = set.size();
        for (int id : model.outputs()) member.outputs.push_back(id + member.first_op);
        for (const auto& p : model.params()) params.push_back(p);
        members.push_back(std::move(member));
    }
    std::vector<int> outputs;
    for (const GraphMember& m : members)
        outputs.insert(outputs.end(), m.outputs.begin(), m.outputs.end());
    set.set_outputs(std::move(outputs));
    set.set_members(std::move(members));
    set.set_params(std::move(params), WeightsState::Loaded);
    return set;
}

std::optional<SetInputs> set_inputs_of(const Graph& graph) {
    if (graph.members().empty()) return std::nullopt;
    for (const GraphMember& m : graph.members())
        if (m.input != kGraphInput) return SetInputs::Separate;
    return SetInputs::Shared;
}

Graph member_graph(const Graph& set, int index) {
    if (index < 0 || index >= int(set.members().size()))
        throw Error(fmt::format("model set '{}' has {} members; there is no member {}",
                                set.name(), set.members().size(), index));
    const GraphMember& m = set.members()[size_t(index)];
    Graph model(m.name, set.tensor_shape(m.input));
    const std::string prefix = member_prefix(index);
    for (int id = m.first_op; id < m.end_op; ++id) {
        const Op& op = set.op(id);
        std::vector<int> ins;
        for (int src : op.inputs) ins.push_back(is_graph_input(src) ? kGraphInput : src - m.first_op);
        std::string name = op.name.rfind(prefix, 0) == 0 ? op.name.substr(prefix.size()) : op.name;
        model.add(op.kind, op.attrs, std::move(ins), std::move(name), op.cell);
    }
    if (m.outputs != std::vector<int>{m.end_op - 1}) {
        std::vector<int> outputs;
        for (int id : m.outputs) outputs.push_back(id - m.first_op);
        model.set_outputs(std::move(outputs));
    }
    if (set.weights_state() != WeightsState::Absent) {
        std::vector<std::vector<ParamTensor>> params(set.params().begin() + m.first_op,
                                                     set.params().begin() + m.end_op);
        model.set_params(std::move(params), set.weights_state());
    }
    return model;
}

std::vector<GraphOutput> output_origins(const Graph& graph) {
    std::vector<GraphOutput> origins;
    if (graph.members().empty()) {
        const std::vector<int> outputs = graph.outputs();
        for (size_t k = 0; k < outputs.size(); ++k) origins.push_back({outputs[k], 0, int(k)});
        return origins;
    }
    // Graph::set_members keeps the graph's outputs equal to its members' outputs in order.
    for (size_t m = 0; m < graph.members().size(); ++m) {
        const std::vector<int>& outputs = graph.members()[m].outputs;
        for (size_t k = 0; k < outputs.size(); ++k)
            origins.push_back({outputs[k], int(m), int(k)});
    }
    return origins;
}

int output_index(const Graph& graph, int member, int member_output) {
    const int models = graph.members().empty() ? 1 : int(graph.members().size());
    if (member < 0 || member >= models)
        throw Error(fmt::format("'{}' has {} model(s); there is no model {}", graph.name(), models,
                                member));
    const std::vector<GraphOutput> origins = output_origins(graph);
    int outputs = 0;  // of that model
    for (size_t k = 0; k < origins.size(); ++k) {
        if (origins[k].member != member) continue;
        if (origins[k].member_output == member_output) return int(k);
        ++outputs;
    }
    throw Error(fmt::format("model {} of '{}' has {} output(s); there is no output {}", member,
                            graph.name(), outputs, member_output));
}

std::string describe_output(const Graph& graph, int index) {
    const std::vector<GraphOutput> origins = output_origins(graph);
    if (index < 0 || index >= int(origins.size()))
        throw Error(fmt::format("'{}' has {} output(s); there is no output {}", graph.name(),
                                origins.size(), index));
    const GraphOutput& o = origins[size_t(index)];
    const std::string& op_name = graph.op(o.op).name;
    const std::string op =
        op_name.empty() ? fmt::format("op {}", o.op) : fmt::format("'{}'", op_name);
    if (graph.members().empty()) return fmt::format("output {} ({})", index, op);
    return fmt::format("output {} ({}, output {} of model {} '{}')", index, op, o.member_output,
                       o.member, graph.members()[size_t(o.member)].name);
}

std::string name_output(const Graph& graph, int index) {
    return graph.output_count() > 1 ? describe_output(graph, index)
                                    : fmt::format("output of '{}'", graph.name());
}

}  // namespace iostune
