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
    // remain, and moves ReLUs that every reader applies into their producers; then visits the
    // ops in order: each op's producers are final when it is reached.
    void run() {
        drop_duplicates();
        hoist_shared_relus();
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

    // A conv, separable conv or add whose readers all apply a ReLU to it first, a SepConv among
    // them, applies it itself: each Relu op reader goes (its readers read the producer), and
    // each SepConv reads the rectified tensor as it is (pre-ReLU dropped). The ReLU then runs in
    // the producer's epilogue instead of on every reader's input: NASNet's first separable
    // convolution of a branch is read only by the second, whose pre-ReLU ran as a copy kernel
    // of its own wherever cuDNN's depthwise kernel was chosen (batch 1: 174 copies, 254 us of
    // its 3.2 ms op sum). A Relu op reader that is a graph output keeps things as they are.
    void hoist_shared_relus() {
        std::vector<std::vector<int>> readers(nodes_.size());
        for (int id = 0; id < int(nodes_.size()); ++id)
            if (nodes_[size_t(id)].alive)
                for (int src : nodes_[size_t(id)].inputs)
                    if (!is_graph_input(src)) readers[size_t(src)].push_back(id);
        for (int id = 0; id < int(nodes_.size()); ++id) {
            const std::vector<int>& r = readers[size_t(id)];
            if (!nodes_[size_t(id)].alive || is_output_[size_t(id)] || r.empty() ||
                !can_take_relu(id))
                continue;
            bool any_sepconv = false, all_rectify = true;
            for (int reader : r) {
                const Node& n = nodes_[size_t(reader)];
                if (n.kind == OpKind::SepConv && std::get<SepConvAttrs>(n.attrs).pre_relu)
                    any_sepconv = true;
                else if (n.kind != OpKind::Relu || is_output_[size_t(reader)])
                    all_rectify = false;
            }
            if (!any_sepconv || !all_rectify) continue;
            set_relu(id);
            for (int reader : r) {
                Node& n = nodes_[size_t(reader)];
                if (n.kind == OpKind::SepConv) {
                    std::get<SepConvAttrs>(n.attrs).pre_relu = false;
                    ++counts_.pre_relu_dropped;
                    continue;
                }
                n.alive = false;  // a Relu op: its readers read the producer
                value_of_[size_t(reader)] = id;
                uses_[size_t(id)] += uses_[size_t(reader)] - 1;
                ++*relu_count(id);
            }
        }
    }

    // The flag that makes a conv, separable conv or add apply a ReLU to what it writes; null
    // for other ops and for a conv with another activation (it applies at most one).
    static bool* relu_flag(Node& n) {
        switch (n.kind) {
            case OpKind::Conv: {
                auto& a = std::get<ConvAttrs>(n.attrs);
                return has_epilogue_activation(a) ? nullptr : &a.relu;
            }
            case OpKind::SepConv: return &std::get<SepConvAttrs>(n.attrs).post_relu;
            case OpKind::Add: return &std::get<AddAttrs>(n.attrs).relu;
            default: return nullptr;
        }
    }
    // An op that can apply a ReLU and does not yet.
    bool can_take_relu(int value) {
        const bool* flag = relu_flag(nodes_[size_t(value)]);
        return flag != nullptr && !*flag;
    }
    void set_relu(int value) { *relu_flag(nodes_[size_t(value)]) = true; }
    // The count a ReLU fused into this producer adds to.
    int* relu_count(int value) {
        switch (nodes_[size_t(value)].kind) {
            case OpKind::Conv: return &counts_.conv_relu;
            case OpKind::SepConv: return &counts_.sepconv_relu;
            default: return &counts_.add_relu;
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
        if (!can_take_relu(producer)) return;
        set_relu(producer);
        ++*relu_count(producer);
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
        for (int src : producers) set_relu(src);
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

    // A value that is >= 0 as computed: a ReLU's, or a conv's, separable conv's or add's that
    // applies one.
    bool is_relu_output(int value) const {
        if (is_graph_input(value)) return false;
        const Node& n = nodes_[size_t(value)];
        switch (n.kind) {
            case OpKind::Relu: return true;
            case OpKind::Conv: return std::get<ConvAttrs>(n.attrs).relu;
            case OpKind::SepConv: return std::get<SepConvAttrs>(n.attrs).post_relu;
            case OpKind::Add: return std::get<AddAttrs>(n.attrs).relu;
            default: return false;
        }
    }

    // A conv, separable conv or add that can take a ReLU, whose only reader is the op being
    // visited.
    bool can_apply_relu(int value) { return absorbable(value) && can_take_relu(value); }

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
