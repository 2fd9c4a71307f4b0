#include "src/fusion.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/error.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/operator_info.h"

namespace iostune {

namespace {

// An op while the pass rewrites it in place; dead ops were absorbed by a later one.
struct Node {
    OpKind kind = OpKind::Identity;
    OpAttrs attrs;
    std::vector<int> inputs;
    std::string name;
    int cell = -1;
    std::vector<ParamTensor> params;
    bool alive = true;
};

// A rough time for each op, and when its output would be ready if every op ran as soon as its
// inputs were. An op takes a launch plus its FLOPs per sample at a small-batch pace: per
// sample, so that every batch size fuses alike and keeps one fingerprint. The times are only
// compared with one another.
struct Estimates {
    std::vector<double> time, ready;
};

Estimates estimate(const Graph& graph) {
    constexpr double kLaunch = 1.0, kFlopsPerUnit = 1e7;  // 1 unit ~ 1 us at batch 1
    Estimates e{std::vector<double>(size_t(graph.size())), std::vector<double>(size_t(graph.size()))};
    for (const Op& op : graph.ops()) {
        double start = 0.0;
        for (int src : op.inputs)
            if (!is_graph_input(src)) start = std::max(start, e.ready[size_t(src)]);
        const double per_sample = double(flops(graph, op.id)) / std::max(1, graph.batch());
        e.time[size_t(op.id)] = kLaunch + per_sample / kFlopsPerUnit;
        e.ready[size_t(op.id)] = start + e.time[size_t(op.id)];
    }
    return e;
}

// IOSTUNE_FUSE_ADDS=all: every Conv -> Add chain fused, as before 2026-11-29 (for A/B runs);
// unset or empty: only where z is ready in time. Anything else is refused, not ignored.
bool fuse_every_add() {
    const char* setting = std::getenv("IOSTUNE_FUSE_ADDS");
    if (setting == nullptr || *setting == '\0') return false;
    if (std::string(setting) == "all") return true;
    throw Error(fmt::format("IOSTUNE_FUSE_ADDS={}: expected \"all\" (fuse every Conv -> Add, "
                            "as before 2026-11-29) or nothing (the default: docs/fusion.md, "
                            "\"z ready in time\")",
                            setting));
}

class Rewriter {
public:
    explicit Rewriter(const Graph& graph)
        : graph_(graph),
          uses_(size_t(graph.size()), 0),
          is_output_(size_t(graph.size()), false),
          value_of_(size_t(graph.size())),
          estimates_(estimate(graph)),
          fuse_every_add_(fuse_every_add()) {
        for (const Op& op : graph.ops()) {
            Node node{op.kind, op.attrs, op.inputs, op.name, op.cell, {}, true};
            if (graph.weights_state() != WeightsState::Absent) node.params = graph.params_of(op.id);
            nodes_.push_back(std::move(node));
            value_of_[size_t(op.id)] = op.id;
            for (int src : op.inputs)
                if (!is_graph_input(src)) ++uses_[size_t(src)];
        }
        for (int out : graph.outputs()) is_output_[size_t(out)] = true;
    }

    // First drops the ops computed twice, so that the fusions below count the readers that
    // remain; then visits the ops in order: each op's producers are final when it is reached.
    void run() {
        drop_duplicates();
        for (int id = 0; id < int(nodes_.size()); ++id) {
            Node& node = nodes_[size_t(id)];
            for (int& src : node.inputs)
                if (!is_graph_input(src)) src = value_of_[size_t(src)];
            if (node.kind == OpKind::Relu) fuse_relu(id);
            if (node.kind == OpKind::Activation) fuse_activation(id);
            if (node.kind == OpKind::PRelu) fuse_prelu(id);
            if (node.kind == OpKind::Add) {
                merge_inner_adds(node);
                fuse_residual_conv(id);
            }
        }
    }

    const std::vector<Node>& nodes() const { return nodes_; }
    // The op that computes op `id`'s tensor now.
    int value_of(int id) const {
        while (value_of_[size_t(id)] != id) id = value_of_[size_t(id)];
        return id;
    }
    const FusionCounts& counts() const { return counts_; }

private:
    // An op without parameters that computes what an earlier op of the same model computes (the
    // same kind, attributes and inputs) is dropped: its readers read the earlier op. NASNet
    // takes the ReLU of each cell's output twice (as the next cell's input and as the input of
    // the cell after) and averages one tensor twice in its normal cells. A graph output stays
    // (outputs are distinct ops), and a model set's members never share an op.
    void drop_duplicates() {
        using Key = std::tuple<OpKind, std::vector<int>, int>;  // kind, inputs, member
        std::map<Key, std::vector<int>> seen;
        for (int id = 0; id < int(nodes_.size()); ++id) {
            Node& node = nodes_[size_t(id)];
            for (int& src : node.inputs)
                if (!is_graph_input(src)) src = value_of_[size_t(src)];
            if (param_count(graph_, id) != 0 || is_output_[size_t(id)]) continue;
            std::vector<int>& same = seen[Key{node.kind, node.inputs, graph_.member_of(id)}];
            const auto earlier = std::find_if(same.begin(), same.end(), [&](int e) {
                return nodes_[size_t(e)].attrs == node.attrs;
            });
            if (earlier == same.end()) {
                same.push_back(id);
                continue;
            }
            node.alive = false;
            value_of_[size_t(id)] = *earlier;
            uses_[size_t(*earlier)] += uses_[size_t(id)];
            for (int src : node.inputs)
                if (!is_graph_input(src)) --uses_[size_t(src)];
            ++counts_.duplicates;
        }
    }

    // A producer whose only reader is the op being visited, and which is no graph output.
    bool absorbable(int id) const {
        return !is_graph_input(id) && uses_[size_t(id)] == 1 && !is_output_[size_t(id)];
    }

    void fuse_relu(int id) {
        const int producer = nodes_[size_t(id)].inputs.at(0);
        if (!absorbable(producer)) return;
        Node& p = nodes_[size_t(producer)];
        if (p.kind == OpKind::Concat) return move_relu_into_concat(id, producer);
        bool* relu = nullptr;
        int* count = nullptr;
        if (p.kind == OpKind::Conv) {
            relu = &std::get<ConvAttrs>(p.attrs).relu;
            count = &counts_.conv_relu;
        } else if (p.kind == OpKind::Add) {
            relu = &std::get<AddAttrs>(p.attrs).relu;
            count = &counts_.add_relu;
        }
        if (relu == nullptr || *relu) return;
        if (p.kind == OpKind::Conv && has_epilogue_activation(std::get<ConvAttrs>(p.attrs)))
            return;
        *relu = true;
        ++*count;
        absorb(id, producer);
    }

    // Relu(Concat(x1..xn)) => Concat(relu(x1)..relu(xn)), the concat being the ReLU's alone:
    // each xi's producer applies the ReLU as it writes (a conv or an add whose only reader is
    // the concat), an xi that is already a ReLU's output needs none, and at most one other xi
    // gets a Relu op of its own, in the concat's place (the concat moves to the ReLU's). NASNet
    // takes the ReLU of every cell's output: its adds now apply it, and the one slice left (a
    // convolution the cell reads elsewhere too) is a sixth of the tensor, off the path.
    void move_relu_into_concat(int id, int concat) {
        std::vector<int> producers;
        int apart = -1;  // the input that gets a Relu op, by position
        const std::vector<int> inputs = nodes_[size_t(concat)].inputs;
        for (size_t k = 0; k < inputs.size(); ++k) {
            if (is_relu_output(inputs[k])) continue;
            if (can_apply_relu(inputs[k]) &&
                std::count(inputs.begin(), inputs.end(), inputs[k]) == 1)
                producers.push_back(inputs[k]);
            else if (apart < 0)
                apart = int(k);
            else
                return;  // two inputs would need a Relu op: no slot for the second
        }
        for (int src : producers) {
            Node& p = nodes_[size_t(src)];
            if (p.kind == OpKind::Conv) std::get<ConvAttrs>(p.attrs).relu = true;
            else std::get<AddAttrs>(p.attrs).relu = true;
        }
        if (apart < 0) {
            ++counts_.relu_concat;
            return absorb(id, concat);
        }
        // Each slot keeps its cell: blocks are cut where cells change.
        Node& relu = nodes_[size_t(id)];
        Node cat = std::move(nodes_[size_t(concat)]);
        cat.inputs[size_t(apart)] = concat;  // the slot's new Relu op
        nodes_[size_t(concat)] = Node{OpKind::Relu, relu.attrs, {inputs[size_t(apart)]}, relu.name,
                                      cat.cell, {}, true};
        cat.cell = relu.cell;
        relu = std::move(cat);
        ++counts_.relu_concat_slice;
    }

    // A value that is >= 0 as computed: a ReLU's, or a conv's or an add's that applies one.
    bool is_relu_output(int value) const {
        if (is_graph_input(value)) return false;
        const Node& n = nodes_[size_t(value)];
        if (n.kind == OpKind::Relu) return true;
        if (n.kind == OpKind::Conv) return std::get<ConvAttrs>(n.attrs).relu;
        return n.kind == OpKind::Add && std::get<AddAttrs>(n.attrs).relu;
    }

    // A conv or an add without an activation whose only reader is the op being visited.
    bool can_apply_relu(int value) const {
        if (!absorbable(value)) return false;
        const Node& n = nodes_[size_t(value)];
        if (n.kind == OpKind::Add) return true;  // not a ReLU add: is_relu_output said so
        return n.kind == OpKind::Conv && !has_epilogue_activation(std::get<ConvAttrs>(n.attrs));
    }

    // Conv -> Activation: the convolution applies the activation last.
    void fuse_activation(int id) {
        const int producer = nodes_[size_t(id)].inputs.at(0);
        if (!absorbable(producer) || nodes_[size_t(producer)].kind != OpKind::Conv) return;
        auto& attrs = std::get<ConvAttrs>(nodes_[size_t(producer)].attrs);
        if (attrs.relu || has_epilogue_activation(attrs)) return;
        attrs.activation = std::get<ActivationAttrs>(nodes_[size_t(id)].attrs);
        ++counts_.conv_activation;
        absorb(id, producer);
    }

    // Conv -> PRelu: the convolution applies the PReLU last; its slopes become the
    // convolution's last parameter.
    void fuse_prelu(int id) {
        const int producer = nodes_[size_t(id)].inputs.at(0);
        if (!absorbable(producer) || nodes_[size_t(producer)].kind != OpKind::Conv) return;
        Node& conv = nodes_[size_t(producer)];
        auto& attrs = std::get<ConvAttrs>(conv.attrs);
        if (attrs.relu || has_epilogue_activation(attrs)) return;
        attrs.prelu = true;
        const auto& slopes = nodes_[size_t(id)].params;  // empty when the graph has no weights
        conv.params.insert(conv.params.end(), slopes.begin(), slopes.end());
        ++counts_.conv_prelu;
        absorb(id, producer);
    }

    // A convolution applies at most one of a ReLU, an activation and a PReLU.
    static bool has_epilogue_activation(const ConvAttrs& a) {
        return a.activation.has_value() || a.prelu;
    }

    // The producer now computes op `id`'s tensor, for its readers.
    void absorb(int id, int producer) {
        nodes_[size_t(id)].alive = false;
        value_of_[size_t(id)] = producer;
        uses_[size_t(producer)] = uses_[size_t(id)];
        is_output_[size_t(producer)] = is_output_[size_t(id)];
    }

    // Add(Add(a, b), c) => Add(a, b, c): the inner add's inputs take its place.
    void merge_inner_adds(Node& add) {
        std::vector<int> inputs;
        for (int src : add.inputs) {
            Node* inner = absorbable(src) ? &nodes_[size_t(src)] : nullptr;
            if (inner && inner->kind == OpKind::Add && !std::get<AddAttrs>(inner->attrs).relu) {
                inputs.insert(inputs.end(), inner->inputs.begin(), inner->inputs.end());
                inner->alive = false;
                ++counts_.add_add;
            } else {
                inputs.push_back(src);
            }
        }
        add.inputs = std::move(inputs);
    }

    // Add(conv(x), z) => Conv(x, z) with residual, in the add's place (after z), when z is
    // estimated ready no later than x plus the add's own time: then the fused convolution ends
    // no later than the add would have. Otherwise it would wait for z where it ran beside z's
    // branch, which costs more than the add kernel it saves.
    void fuse_residual_conv(int id) {
        Node& add = nodes_[size_t(id)];
        if (add.inputs.size() != 2) return;
        bool later_z = false;
        for (int k = 0; k < 2; ++k) {
            const int conv_id = add.inputs[size_t(k)];
            if (!absorbable(conv_id) || nodes_[size_t(conv_id)].kind != OpKind::Conv) continue;
            Node& conv = nodes_[size_t(conv_id)];
            auto attrs = std::get<ConvAttrs>(conv.attrs);
            if (attrs.relu || has_epilogue_activation(attrs) || attrs.residual) continue;
            const int z = add.inputs[size_t(1 - k)];
            if (!fuse_every_add_ &&
                ready(z) > ready(conv.inputs.at(0)) + estimates_.time[size_t(id)]) {
                later_z = true;
                continue;
            }
            attrs.residual = true;
            attrs.relu = std::get<AddAttrs>(add.attrs).relu;
            Node fused{OpKind::Conv, attrs, {conv.inputs.at(0), add.inputs[size_t(1 - k)]},
                       conv.name, add.cell, std::move(conv.params), true};
            conv.alive = false;
            add = std::move(fused);
            ++counts_.conv_add;
            return;
        }
        counts_.add_of_branches += later_z;
    }

    // Estimated ready time of a value (a graph input: 0).
    double ready(int value) const {
        return is_graph_input(value) ? 0.0 : estimates_.ready[size_t(value)];
    }

    const Graph& graph_;  // as given
    std::vector<Node> nodes_;
    std::vector<int> uses_;
    std::vector<bool> is_output_;
    std::vector<int> value_of_;
    Estimates estimates_;  // of the graph as given
    bool fuse_every_add_;
    FusionCounts counts_;
};

// The members of a fused model set: each keeps its ops (none moves across members), so its
// range is that of its surviving ops; its fingerprint is that of its fused self.
void refit_members(const Graph& original, const std::vector<int>& new_id, const Rewriter& rw,
                   Graph& fused) {
    std::vector<GraphMember> members = original.members();
    for (GraphMember& m : members) {
        int first = fused.size(), end = 0;
        for (int id = m.first_op; id < m.end_op; ++id) {
            if (new_id[size_t(id)] < 0) continue;
            first = std::min(first, new_id[size_t(id)]);
            end = std::max(end, new_id[size_t(id)] + 1);
        }
        m.first_op = first;
        m.end_op = end;
        for (int& out : m.outputs) out = new_id[size_t(rw.value_of(out))];
    }
    fused.set_members(members);
    for (size_t k = 0; k < members.size(); ++k)
        members[k].fingerprint = fingerprint(member_graph(fused, int(k)));
    fused.set_members(std::move(members));
}

}  // namespace

FusedGraph fuse_epilogues(const Graph& graph) {
    Rewriter rw(graph);
    rw.run();
    if (!rw.counts().changed()) return {graph, rw.counts()};

    Graph fused(graph.name(), graph.input_shape());
    for (int k = 1; k < graph.input_count(); ++k) fused.add_input(graph.input_shape(k));
    std::vector<int> new_id(size_t(graph.size()), -1);
    std::vector<std::vector<ParamTensor>> params;
    for (int id = 0; id < graph.size(); ++id) {
        const Node& node = rw.nodes()[size_t(id)];
        if (!node.alive) continue;
        std::vector<int> inputs;
        for (int src : node.inputs) inputs.push_back(is_graph_input(src) ? src : new_id[size_t(src)]);
        new_id[size_t(id)] = fused.add(node.kind, node.attrs, std::move(inputs), node.name, node.cell);
        params.push_back(node.params);
    }
    std::vector<int> outputs;
    for (int out : graph.outputs()) outputs.push_back(new_id[size_t(rw.value_of(out))]);
    if (outputs.size() > 1 || outputs.front() != fused.size() - 1) fused.set_outputs(std::move(outputs));
    if (!graph.members().empty()) refit_members(graph, new_id, rw, fused);
    if (graph.weights_state() != WeightsState::Absent)
        fused.set_params(std::move(params), graph.weights_state());
    return {std::move(fused), rw.counts()};
}

}  // namespace iostune
