#include "src/onnx/draft_graph.h"

#include <fmt/format.h>

#include <utility>

#include "src/error.h"
#include "src/quoted.h"

namespace iostune::onnx_import {

int DraftGraph::add(OpKind kind, OpAttrs attrs, std::vector<int> inputs, std::string name,
                    std::vector<ParamTensor> params) {
    std::vector<Shape> in_shapes;
    for (int id : inputs) in_shapes.push_back(shape(id));
    DraftOp op;
    op.shape = infer_shape(kind, attrs, in_shapes, name);
    op.kind = kind;
    op.attrs = std::move(attrs);
    op.inputs = std::move(inputs);
    op.name = std::move(name);
    op.params = std::move(params);
    ops_.push_back(std::move(op));
    return int(ops_.size()) - 1;
}

void DraftGraph::add_bias(int id, std::vector<float> values) {
    DraftOp& op = ops_.at(size_t(id));
    bool* bias = nullptr;
    if (op.kind == OpKind::Conv) bias = &std::get<ConvAttrs>(op.attrs).bias;
    if (op.kind == OpKind::Linear) bias = &std::get<LinearAttrs>(op.attrs).bias;
    if (!bias)
        throw Error(
            fmt::format("op {}: only a Conv or Linear takes a bias", quoted_name(op.name)));
    if (*bias) {
        std::vector<float>& existing = op.params.back().values;
        for (size_t i = 0; i < existing.size(); ++i) existing[i] += values[i];
        return;
    }
    *bias = true;
    op.params.push_back({{int(values.size())}, std::move(values)});
}

const Shape& DraftGraph::shape(int id) const {
    return id == kGraphInput ? input_ : ops_.at(size_t(id)).shape;
}

int DraftGraph::resolve(int id) const {
    while (id != kGraphInput && ops_[size_t(id)].replaced_by >= 0)
        id = ops_[size_t(id)].replaced_by;
    return id;
}

// Live consumers of each op; a graph output counts as one, so an output op is never fused
// into a consumer that is not the output.
std::vector<int> DraftGraph::consumer_counts(const std::vector<int>& outputs) const {
    std::vector<int> counts(ops_.size(), 0);
    for (const DraftOp& op : ops_) {
        if (op.replaced_by >= 0) continue;
        for (int in : op.inputs)
            if (int src = resolve(in); src != kGraphInput) ++counts[size_t(src)];
    }
    for (int output : outputs)
        if (int out = resolve(output); out != kGraphInput) ++counts[size_t(out)];
    return counts;
}

void DraftGraph::fold_affines(const std::vector<int>& outputs) {
    std::vector<int> counts = consumer_counts(outputs);
    for (size_t id = 0; id < ops_.size(); ++id) {
        DraftOp& affine = ops_[id];
        if (affine.kind != OpKind::ChannelAffine || affine.replaced_by >= 0) continue;
        const int src = resolve(affine.inputs[0]);
        if (src == kGraphInput || counts[size_t(src)] != 1) continue;
        DraftOp& producer = ops_[size_t(src)];
        if (producer.kind == OpKind::GroupNorm) {
            fold_into_norm(affine, producer);
            affine.replaced_by = src;
            counts[size_t(src)] = counts[id];
            continue;
        }
        bool* has_bias = nullptr;
        if (producer.kind == OpKind::Conv && !std::get<ConvAttrs>(producer.attrs).relu)
            has_bias = &std::get<ConvAttrs>(producer.attrs).bias;
        if (producer.kind == OpKind::Linear) has_bias = &std::get<LinearAttrs>(producer.attrs).bias;
        if (!has_bias) continue;
        // y = scale * (W x + b) + shift = (scale W) x + (scale b + shift), per output channel.
        const std::vector<float>& scale = affine.params[0].values;
        const std::vector<float>& shift = affine.params[1].values;
        std::vector<float>& weight = producer.params[0].values;
        const size_t per_channel = weight.size() / scale.size();
        for (size_t o = 0; o < scale.size(); ++o)
            for (size_t k = 0; k < per_channel; ++k) weight[o * per_channel + k] *= scale[o];
        if (*has_bias) {
            std::vector<float>& bias = producer.params[1].values;
            for (size_t o = 0; o < scale.size(); ++o) bias[o] = scale[o] * bias[o] + shift[o];
        } else {
            *has_bias = true;
            producer.params.push_back({{int(shift.size())}, shift});
        }
        affine.replaced_by = src;
        counts[size_t(src)] = counts[id];
    }
}

// y = scale * (norm * gamma + beta) + shift: GroupNorm's affine part over a group norm exported
// as Reshape + InstanceNormalization + Reshape, followed by Mul and Add.
void DraftGraph::fold_into_norm(const DraftOp& affine, DraftOp& norm) {
    const std::vector<float>& scale = affine.params[0].values;
    const std::vector<float>& shift = affine.params[1].values;
    std::vector<float>& gamma = norm.params[0].values;
    std::vector<float>& beta = norm.params[1].values;
    for (size_t c = 0; c < scale.size(); ++c) {
        gamma[c] *= scale[c];
        beta[c] = scale[c] * beta[c] + shift[c];
    }
}

void DraftGraph::fuse_relus(const std::vector<int>& outputs) {
    std::vector<int> counts = consumer_counts(outputs);
    for (size_t id = 0; id < ops_.size(); ++id) {
        DraftOp& relu = ops_[id];
        if (relu.kind != OpKind::Relu || relu.replaced_by >= 0) continue;
        const int src = resolve(relu.inputs[0]);
        if (src == kGraphInput || counts[size_t(src)] != 1) continue;
        DraftOp& producer = ops_[size_t(src)];
        bool* fused = nullptr;
        if (producer.kind == OpKind::Conv) fused = &std::get<ConvAttrs>(producer.attrs).relu;
        if (producer.kind == OpKind::Add) fused = &std::get<AddAttrs>(producer.attrs).relu;
        if (!fused || *fused) continue;
        *fused = true;
        relu.replaced_by = src;
        counts[size_t(src)] = counts[id];
    }
}

Graph DraftGraph::finish(const std::string& name, const std::vector<int>& outputs) {
    fold_affines(outputs);
    fuse_relus(outputs);
    std::vector<int> outs;
    for (int output : outputs) {
        outs.push_back(resolve(output));
        if (outs.back() == kGraphInput)
            throw Error(fmt::format("model {}: an output is the input itself (no operators)",
                                    quoted_name(name)));
    }

    // Only ops the outputs depend on are emitted; walking back from them keeps id order.
    std::vector<bool> needed(ops_.size(), false);
    for (int out : outs) needed[size_t(out)] = true;
    for (int id = int(ops_.size()) - 1; id >= 0; --id) {
        if (!needed[size_t(id)]) continue;
        for (int in : ops_[size_t(id)].inputs)
            if (int src = resolve(in); src != kGraphInput) needed[size_t(src)] = true;
    }

    Graph graph(name, input_);
    std::vector<int> graph_id(ops_.size(), kGraphInput);
    std::vector<std::vector<ParamTensor>> params;
    for (size_t id = 0; id < ops_.size(); ++id) {
        if (!needed[id]) continue;
        DraftOp& op = ops_[id];
        std::vector<int> inputs;
        for (int in : op.inputs) {
            const int src = resolve(in);
            inputs.push_back(src == kGraphInput ? kGraphInput : graph_id[size_t(src)]);
        }
        graph_id[id] = graph.add(op.kind, op.attrs, std::move(inputs), op.name);
        params.push_back(std::move(op.params));
    }
    graph.set_params(std::move(params), WeightsState::Loaded);
    // One output that is the last op is the graph's default; anything else is named.
    if (outs.size() > 1 || graph_id[size_t(outs[0])] != graph.size() - 1) {
        std::vector<int> ids;
        for (int out : outs) ids.push_back(graph_id[size_t(out)]);
        graph.set_outputs(std::move(ids));
    }
    return graph;
}

}  // namespace iostune::onnx_import
