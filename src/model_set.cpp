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
        if (g.input_count() != 1 || g.output_count() != 1)
            throw Error(fmt::format("model set '{}': member {} ('{}') has {} inputs and {} "
                                    "outputs; members take one input and return one output",
                                    name, i, g.name(), g.input_count(), g.output_count()));
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
        member.output = model.output_id() + member.first_op;
        for (const auto& p : model.params()) params.push_back(p);
        members.push_back(std::move(member));
    }
    std::vector<int> outputs;
    for (const GraphMember& m : members) outputs.push_back(m.output);
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
    if (m.output != m.end_op - 1) model.set_outputs({m.output - m.first_op});
    if (set.weights_state() != WeightsState::Absent) {
        std::vector<std::vector<ParamTensor>> params(set.params().begin() + m.first_op,
                                                     set.params().begin() + m.end_op);
        model.set_params(std::move(params), set.weights_state());
    }
    return model;
}

}  // namespace iostune
