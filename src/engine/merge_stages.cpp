// Operator-merge stages. Stacked: convolutions that read the same tensor run as one wider
// convolution over stacked, zero-padded weights (in the engine's type and layout). Under a memory
// plan made for a schedule that holds the stage, the stacked output is a buffer of the plan and
// each merged op lives in its channel slice of it (unless its home is a concat slice or holds a
// graph output) so consumers read the slice in place; a stage run under another plan has an
// output of its own and copies each op's slice to where the op lives. Batched: separable
// convolutions of one shape, each at home, as batched launches (batched_sepconv.h).
#include <fmt/format.h>

#include <algorithm>

#include "src/engine/engine_impl.h"

namespace iostune {

Engine::Impl::MergeExec& Engine::Impl::plan_merge(const Stage& stage) {
    const std::string signature = stage_signature(stage);
    if (auto it = merges.find(signature); it != merges.end()) return it->second;
    if (stage.groups.size() != 1) {
        throw Error(fmt::format("merge stage {} must have exactly one group", signature));
    }
    const std::vector<int>& ids = stage.groups[0];
    std::string why;
    if (!can_merge(graph, ids, &why)) {
        throw Error(fmt::format("merge stage {} is not a legal merge: {}", signature, why));
    }
    MergeExec m;
    m.plan.signature = signature;
    if (merge_kind(graph, ids) == MergeKind::Batched) {
        m.plan.ops = ids;
        for (int id : ids) {
            const Op& op = graph.op(id);
            m.plan.out_channels += op.output.c;
            m.plan.kernel_h = m.plan.kernel_w =
                std::max(m.plan.kernel_h, op.as<SepConvAttrs>().kernel);
        }
        bind_batched(m);
        return merges.emplace(signature, std::move(m)).first->second;
    }
    const std::string context = fmt::format("running merge stage {}", signature);
    const Op& first = graph.op(ids[0]);
    const auto& fa = first.as<ConvAttrs>();
    const TensorView& in = tensor(first.inputs[0]);
    const int in_channels = graph.tensor_shape(first.inputs[0]).c;  // in.c may be padded
    int kh = 0, kw = 0, channels = 0;
    for (int id : ids) {
        const auto& a = graph.op(id).as<ConvAttrs>();
        kh = std::max(kh, a.kernel_h);
        kw = std::max(kw, a.kernel_w);
        channels += a.out_channels;
    }
    // Stack the weights along output channels, each kernel centred in the largest one.
    std::vector<float> stacked(size_t(channels) * size_t(in_channels) * size_t(kh) * size_t(kw),
                               0.0f);
    std::vector<float> bias, slopes;
    int row = 0;
    for (int id : ids) {
        const auto& a = graph.op(id).as<ConvAttrs>();
        const auto& params = graph.params_of(id);
        const std::vector<float>& wv = params.at(0).values;
        const int dy = (kh - a.kernel_h) / 2, dx = (kw - a.kernel_w) / 2;
        for (int o = 0; o < a.out_channels; ++o)
            for (int c = 0; c < in_channels; ++c)
                for (int y = 0; y < a.kernel_h; ++y)
                    for (int x = 0; x < a.kernel_w; ++x)
                        stacked[((size_t(row + o) * size_t(in_channels) + size_t(c)) * size_t(kh) +
                                 size_t(y + dy)) * size_t(kw) + size_t(x + dx)] =
                            wv[((size_t(o) * size_t(in_channels) + size_t(c)) * size_t(a.kernel_h) +
                                size_t(y)) * size_t(a.kernel_w) + size_t(x)];
        if (a.bias) bias.insert(bias.end(), params.at(1).values.begin(), params.at(1).values.end());
        if (a.prelu)
            slopes.insert(slopes.end(), params.back().values.begin(), params.back().values.end());
        row += a.out_channels;
    }
    m.weight = upload_filter(stacked, channels, in_channels, kh, kw, in.c,
                             context + " stacked weights");
    if (fa.bias) m.bias = upload_vector(bias, context + " stacked bias");
    if (fa.prelu) m.slope = upload_vector(slopes, context + " stacked PReLU slopes");
    const Shape& s0 = first.output;
    const TensorView merged = merged_place(m, Shape{s0.n, channels, s0.h, s0.w});
    ConvSpec spec{channels, in.c, kh, kw,
                  ConvGeometry{fa.pad_h + (kh - fa.kernel_h) / 2,
                               fa.pad_w + (kw - fa.kernel_w) / 2, fa.stride_h, fa.stride_w, 1, 1,
                               1},
                  m.weight.get(), fa.bias ? m.bias.get() : nullptr, fa.relu};
    spec.activation = fa.activation;  // can_merge: the same in every merged op
    if (fa.prelu) spec.prelu_slope = m.slope.get();
    m.merged = merged;
    m.spec = spec;
    m.planned_input = in;
    m.conv.emplace(plan_conv(context, in, merged, spec, {m.staged_input, nullptr}));
    int offset = 0;
    for (int id : ids) {
        const int c = graph.op(id).output.c;
        m.slices.push_back(merged.channels(offset, c));
        offset += c;
    }
    m.plan.ops = ids;
    m.plan.out_channels = channels;
    m.plan.kernel_h = kh;
    m.plan.kernel_w = kw;
    m.plan.path = std::string(to_string(m.conv->path)) + m.conv->staging_note();
    m.plan.algorithms = m.conv->label();
    workspace_bytes = std::max(workspace_bytes, m.conv->workspace_bytes);
    return merges.emplace(signature, std::move(m)).first->second;
}

// Each member's own views, scratch and weights under the current plan. Its ops live at home:
// nothing is copied (slices are their views).
void Engine::Impl::bind_batched(MergeExec& m) {
    m.slices.clear();
    std::vector<BatchedSepConv::Member> members;
    bool logical_channels = true;
    for (int id : m.plan.ops) {
        const Op& op = graph.op(id);
        const auto& a = op.as<SepConvAttrs>();
        const OpWeights& w = weights_of(id);
        const TensorView& in = tensor(op.inputs[0]);
        const TensorView& out = views[size_t(id)];
        m.slices.push_back(out);
        logical_channels = logical_channels && in.c == graph.tensor_shape(op.inputs[0]).c;
        BatchedSepConv::Member member;
        member.in = in;
        member.out = out;
        member.depthwise_out =
            packed(scratch_buffer(scratch_of(id).depthwise_output, op, "depthwise output"),
                   Shape{out.n, in.c, out.h, out.w});
        member.depthwise_weight = w.depthwise.get();
        member.pointwise_weight = w.weight2.get();
        member.bias = a.bias ? w.bias.get() : nullptr;
        member.g = DepthwiseGeometry{a.kernel, a.kernel, a.stride, a.stride,
                                     a.pad,    a.pad,    a.dilation, a.dilation};
        member.relu_input = a.pre_relu;
        member.relu_output = a.post_relu;
        members.push_back(member);
    }
    if (m.batched) {  // graphs captured before may still read them
        retire(m.batched->take_tables());
        retire(m.batched->take_biases());
    }
    m.batched.reset();
    std::string why = "an input with padded channels";
    if (logical_channels && BatchedSepConv::supports(members, &why)) {
        Lane& lane = *lanes[0];
        m.batched.emplace(std::move(members), options.precision, cublaslt.get(),
                          lane.cublas_workspace.get(), lane.cublas_workspace.bytes(), origin.get(),
                          fmt::format("running batched merge stage {}", m.plan.signature));
        m.plan.path = "batched";
        m.plan.algorithms = m.batched->label();
    } else {
        m.plan.path = "per-op";
        m.plan.algorithms = "each op's own plan, one after the other: " + why;
    }
}

// Ops that live in their slice of the merged output need nothing more; the others (outputs that
// are concat slices, or a merge stage run under another plan) get a copy. A batched merge runs
// its launches, or its ops one after the other.
void Engine::Impl::run_merge(const MergeExec& m, Lane& lane, const DeviceBuffer& workspace,
                             cudaStream_t stream) {
    if (merge_kind(graph, m.plan.ops) == MergeKind::Batched) {
        if (m.batched)
            m.batched->run(lane.cublas, lane.cublas_workspace.get(),
                           lane.cublas_workspace.bytes(), stream);
        else
            for (int id : m.plan.ops) run_op(id, lane, workspace, stream);
        return;
    }
    if (!m.conv)
        throw InternalError(fmt::format("merge stage {} runs without its planned convolution; "
                                        "please report it with the model", m.plan.signature));
    lane.cudnn.set_stream(stream);
    engine_internal::require_workspace(*m.conv, workspace);
    m.conv->run(lane.cudnn.get(), workspace.get(), stream);
    for (size_t k = 0; k < m.plan.ops.size(); ++k) {
        const TensorView& home = views[size_t(m.plan.ops[k])];
        if (!(home == m.slices[k])) engine_internal::copy_view(m.slices[k], home, stream, m.conv->context);
    }
}

// The plan's buffer for the stage (and its staging scratch), or an output of the stage's own,
// filled with seeded values as the plan's memory is.
TensorView Engine::Impl::merged_place(MergeExec& m, const Shape& shape) {
    if (const MergePlacement* p = memory_plan.merge(m.plan.signature)) {
        retire(std::move(m.own_output));
        m.staged_input = p->staged_input >= 0 ? address(p->staged_input) : nullptr;
        return view_at({p->buffer, 0}, shape);
    }
    m.staged_input = nullptr;  // the convolution stages into a buffer of its own, if it must
    if (m.own_output.bytes() == 0) {
        m.own_output = allocate(shape);
        fill(m.own_output.get(), shape.elements(), dtype, options.fill_seed);
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(origin.get()), "filling a merge stage's output");
    }
    return packed(m.own_output.get(), shape);
}

// Each merge stage's output moved to its place under the new plan, its slices with it, and its
// convolution pointed there (or planned again when more than the addresses changed).
void Engine::Impl::replace_merges() {
    for (auto& [signature, m] : merges) {
        if (merge_kind(graph, m.plan.ops) == MergeKind::Batched) {
            bind_batched(m);
            continue;
        }
        const void* old_staging = m.staged_input;
        const TensorView merged =
            merged_place(m, Shape{m.merged.n, m.merged.c, m.merged.h, m.merged.w});
        const TensorView& in = tensor(graph.op(m.plan.ops[0]).inputs[0]);
        // (A merge whose last planning threw has no convolution: planned again.)
        if (m.conv && merged == m.merged && in == m.planned_input && m.staged_input == old_staging)
            continue;
        m.merged = merged;
        m.slices.clear();
        int offset = 0;
        for (int id : m.plan.ops) {
            const int c = graph.op(id).output.c;
            m.slices.push_back(merged.channels(offset, c));
            offset += c;
        }
        m.planned_input = in;
        const ConvStaging staging{m.staged_input, nullptr};
        if (m.conv && m.conv->rebind(in, merged, std::nullopt, staging)) continue;
        if (m.conv) retire(std::move(*m.conv));
        m.conv.reset();
        m.conv.emplace(plan_conv(fmt::format("running merge stage {}", signature), in, merged,
                                 m.spec, staging));
        workspace_bytes = std::max(workspace_bytes, m.conv->workspace_bytes);
    }
}

}  // namespace iostune
