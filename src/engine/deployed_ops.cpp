// The execution plan and launch of the operators of deployed CNNs (graph.h: Activation, Binary,
// ChannelAffine, ChannelShuffle, ChannelSlice, Resize, ConvTranspose, ChannelNorm, SpatialPad,
// PRelu, GroupNorm, RadixSoftmax, StridedSlice, DepthToSpace, SpaceToDepth, Flatten):
// the engine's kernels of op_kernels.h, cuDNN's backward-data convolution for ConvTranspose (the engine's
// direct kernel where cuDNN has no algorithm), and no work at all for a channel slice, whose view
// is its input's channels (memory_plan.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "src/engine/engine_impl.h"
#include "src/engine/op_kernels.h"
#include "src/engine/pointwise_function.h"
#include "src/error.h"

namespace iostune {

using engine_internal::op_label;

namespace {

BinaryKind binary_kind(BinaryOp op) {
    switch (op) {
        case BinaryOp::Add: return BinaryKind::Add;
        case BinaryOp::Sub: return BinaryKind::Sub;
        case BinaryOp::Mul: return BinaryKind::Mul;
        case BinaryOp::Div: return BinaryKind::Div;
    }
    throw Error("unknown binary operation");
}

ChannelBlockOrder block_order(BlockOrder order) {
    return order == BlockOrder::Dcr ? ChannelBlockOrder::Dcr : ChannelBlockOrder::Crd;
}

SliceGeometry slice_geometry(const StridedSliceAttrs& a) {
    return SliceGeometry{a.c_begin, a.c_step, a.h_begin, a.h_step, a.w_begin, a.w_step};
}

ConvTransposeGeometry conv_transpose_geometry(const ConvTransposeAttrs& a) {
    return ConvTransposeGeometry{a.kernel_h, a.kernel_w,   a.stride_h,   a.stride_w, a.pad_h,
                                 a.pad_w,    a.dilation_h, a.dilation_w, a.groups};
}

}  // namespace

void Engine::Impl::plan_deployed_op(const Op& op) {
    OpExec& exec = execs[size_t(op.id)];
    const TensorView& out = views[size_t(op.id)];
    const TensorView& in = tensor(op.inputs.at(0));
    switch (op.kind) {
        case OpKind::Activation:
            exec.plan.path = fmt::format("activation kernel ({})",
                                         to_string(op.as<ActivationAttrs>().function));
            break;
        case OpKind::Binary: {
            const TensorView& b = tensor(op.inputs.at(1));
            const bool broadcast = !in.same_shape(out) || !b.same_shape(out);
            exec.plan.path = fmt::format("binary kernel ({}{})", to_string(op.as<BinaryAttrs>().op),
                                         broadcast ? ", broadcast" : "");
            break;
        }
        case OpKind::ChannelAffine:
            exec.plan.path = "channel affine kernel";
            break;
        case OpKind::ChannelShuffle:
            exec.plan.path = "channel shuffle kernel";
            break;
        case OpKind::ChannelSlice: {
            const auto& a = op.as<ChannelSliceAttrs>();
            exec.plan.path =
                fmt::format("view of channels [{}, {}) of its input (no copy)", a.begin, a.end);
            break;
        }
        case OpKind::Resize: {
            const auto& a = op.as<ResizeAttrs>();
            exec.plan.path = a.mode == ResizeMode::Nearest
                                 ? "resize kernel (nearest)"
                                 : fmt::format("resize kernel (bilinear{})",
                                               a.align_corners ? ", align_corners" : "");
            break;
        }
        case OpKind::SpatialPad: {
            const auto& a = op.as<SpatialPadAttrs>();
            exec.plan.path = fmt::format("spatial pad kernel (top {}, bottom {}, left {}, right {})",
                                         a.top, a.bottom, a.left, a.right);
            break;
        }
        case OpKind::ChannelNorm:
            exec.plan.path = out.nhwc() ? "channel norm kernel (a warp per pixel)"
                                        : "channel norm kernel (a thread per pixel)";
            break;
        case OpKind::PRelu:
            exec.plan.path = "prelu kernel";
            break;
        case OpKind::GroupNorm:
            exec.plan.path = fmt::format("group norm kernel (a block per image and group, {} "
                                         "groups)",
                                         op.as<GroupNormAttrs>().groups);
            break;
        case OpKind::RadixSoftmax: {
            const auto& a = op.as<RadixSoftmaxAttrs>();
            exec.plan.path = fmt::format("radix softmax kernel (radix {}, cardinality {})",
                                         a.radix, a.cardinality);
            break;
        }
        case OpKind::StridedSlice: {
            const auto& a = op.as<StridedSliceAttrs>();
            exec.plan.path = fmt::format("strided slice kernel (steps {}, {}, {})", a.c_step,
                                         a.h_step, a.w_step);
            break;
        }
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth: {
            const auto& a = op.as<DepthSpaceAttrs>();
            exec.plan.path = fmt::format("{} kernel (block {}, {})",
                                         op.kind == OpKind::DepthToSpace ? "depth to space"
                                                                         : "space to depth",
                                         a.block, to_string(a.order));
            break;
        }
        case OpKind::Flatten:
            exec.plan.path = "flatten kernel";
            break;
        case OpKind::ConvTranspose: {
            const auto& a = op.as<ConvTransposeAttrs>();
            const OpWeights& w = weights_of(op.id);
            const std::string context = op_label(op);
            const ConvTransposeSpec spec{a.out_channels, in.c, a.kernel_h, a.kernel_w,
                                         ConvGeometry{a.pad_h, a.pad_w, a.stride_h, a.stride_w,
                                                      a.dilation_h, a.dilation_w, a.groups},
                                         w.weight.get(), a.bias ? w.bias.get() : nullptr};
            // cuDNN on the op's own views first; strided ones it may refuse are staged (into
            // the memory plan's scratch for them).
            for (const bool stage : {false, true}) {
                const bool stage_in = stage && !in.packed(), stage_out = stage && !out.packed();
                if (stage && !stage_in && !stage_out) break;
                const auto staged = [&](bool yes, void* scratch, const TensorView& v,
                                         const char* what) {
                    return yes ? packed(scratch_buffer(scratch, op, what), Shape{v.n, v.c, v.h, v.w})
                               : TensorView{};
                };
                const TensorView staged_in =
                    staged(stage_in, exec.scratch.staged_input, in, "staged input");
                const TensorView staged_out =
                    staged(stage_out, exec.scratch.staged_output, out, "staged output");
                exec.conv_transpose.emplace(context, in, out, staged_in, staged_out, spec,
                                            conv_math);
                if (choose_conv_transpose(*exec.conv_transpose)) break;
                exec.conv_transpose.reset();
            }
            if (!exec.conv_transpose) {
                exec.plan.path = "conv transpose kernel (direct: cuDNN has no backward-data "
                                 "algorithm for it)";
                break;
            }
            const ConvTransposeStep& step = *exec.conv_transpose;
            exec.plan.path = step.path();
            exec.plan.algorithms = step.label();
            exec.plan.candidates = step.candidates;
            exec.plan.workspace_bytes = step.workspace_bytes;
            workspace_bytes = std::max(workspace_bytes, step.workspace_bytes);
            break;
        }
        default:
            throw Error(fmt::format("{}: not an operator of deployed CNNs", op_label(op)));
    }
}

bool Engine::Impl::choose_conv_transpose(ConvTransposeStep& step) {
    Lane& lane = *lanes[0];
    lane.cudnn.set_stream(lane.stream.get());
    const bool legacy = step.choose_algorithm(lane.cudnn.get(), options.precision,
                                              options.max_workspace_bytes);
    std::string timed;
    int graph_candidates = 0;
    try {
        const GraphConv& shortlist = step.graph(options.precision, options.max_workspace_bytes);
        graph_candidates = shortlist.candidates();
        timed = "graph API: " + shortlist.notes();
    } catch (const Error& e) {
        timed = fmt::format("graph API refused: {}", e.what());
    }
    // Each candidate timed as convolutions are (time_step: one launch replayed as a CUDA graph,
    // cold L2); the legacy algorithm is cudnnFind's fastest.
    DeviceBuffer scratch;
    cudnnHandle_t handle = lane.cudnn.get();
    const auto time_selected = [&](const std::string& name) -> std::optional<double> {
        try {
            const double ms = time_launch([&](cudaStream_t s, void* w) { step.run(handle, w, s); },
                                          step.workspace_bytes, scratch, step.context);
            timed += fmt::format(", {} {:.4f} ms", name, ms);
            return ms;
        } catch (const Error&) {
            timed += fmt::format(", {} failed", name);
            return std::nullopt;
        }
    };
    std::optional<double> best;
    int best_rank = -1;  // -1: the legacy algorithm
    if (legacy) best = time_selected(step.label());
    for (int rank = 0; rank < graph_candidates; ++rank) {
        if (!step.select_graph(rank)) continue;
        const std::optional<double> ms = time_selected(step.label());
        if (ms && (!best || *ms < *best)) best = ms, best_rank = rank;
    }
    step.candidates = fmt::format("find: {}; timed: {}", step.candidates, timed);
    if (!best) return false;
    if (best_rank >= 0) return step.select_graph(best_rank);
    step.select_legacy();
    return true;
}

void Engine::Impl::run_deployed_op(const Op& op, Lane& lane, const DeviceBuffer& workspace,
                                   cudaStream_t stream) {
    const OpExec& exec = execs[size_t(op.id)];
    const TensorView& out = views[size_t(op.id)];
    const TensorView& in = tensor(op.inputs.at(0));
    const OpWeights& w = weights_of(op.id);
    switch (op.kind) {
        case OpKind::Activation: {
            launch_activation(in, out, op.as<ActivationAttrs>(), stream);
            break;
        }
        case OpKind::Binary:
            launch_binary(in, tensor(op.inputs.at(1)), out, binary_kind(op.as<BinaryAttrs>().op),
                          stream);
            break;
        case OpKind::ChannelAffine:
            launch_channel_affine(in, out, w.weight.get(), w.bias.get(), stream);
            break;
        case OpKind::ChannelShuffle:
            launch_channel_shuffle(in, out, op.as<ChannelShuffleAttrs>().groups, stream);
            break;
        case OpKind::ChannelSlice:
            break;  // its view is its input's channels
        case OpKind::Resize: {
            const auto& a = op.as<ResizeAttrs>();
            launch_resize(in, out, a.mode == ResizeMode::Bilinear, a.align_corners, stream);
            break;
        }
        case OpKind::SpatialPad: {
            const auto& a = op.as<SpatialPadAttrs>();
            launch_spatial_pad(in, out, a.top, a.bottom, a.left, a.right, stream);
            break;
        }
        case OpKind::ChannelNorm:
            launch_channel_norm(in, out, w.weight.get(), w.bias.get(),
                                op.as<ChannelNormAttrs>().eps, stream);
            break;
        case OpKind::PRelu:
            launch_prelu(in, out, w.slope.get(), stream);
            break;
        case OpKind::GroupNorm: {
            const auto& a = op.as<GroupNormAttrs>();
            launch_group_norm(in, out, w.weight.get(), w.bias.get(), a.groups, a.eps, stream);
            break;
        }
        case OpKind::RadixSoftmax: {
            const auto& a = op.as<RadixSoftmaxAttrs>();
            launch_radix_softmax(in, out, a.radix, a.cardinality, stream);
            break;
        }
        case OpKind::StridedSlice:
            launch_strided_slice(in, out, slice_geometry(op.as<StridedSliceAttrs>()), stream);
            break;
        case OpKind::DepthToSpace: {
            const auto& a = op.as<DepthSpaceAttrs>();
            launch_depth_to_space(in, out, a.block, block_order(a.order), stream);
            break;
        }
        case OpKind::SpaceToDepth: {
            const auto& a = op.as<DepthSpaceAttrs>();
            launch_space_to_depth(in, out, a.block, block_order(a.order), stream);
            break;
        }
        case OpKind::Flatten:
            launch_flatten(in, out, stream);
            break;
        case OpKind::ConvTranspose: {
            if (exec.conv_transpose) {
                lane.cudnn.set_stream(stream);
                if (exec.conv_transpose->workspace_bytes > workspace.bytes())
                    throw Error(fmt::format("internal error: {} needs a workspace of {} bytes "
                                            "but its slot holds {}",
                                            op_label(op), exec.conv_transpose->workspace_bytes,
                                            workspace.bytes()));
                exec.conv_transpose->run(lane.cudnn.get(), workspace.get(), stream);
                break;
            }
            const auto& a = op.as<ConvTransposeAttrs>();
            launch_conv_transpose(in, out, w.weight.get(), a.bias ? w.bias.get() : nullptr,
                                  conv_transpose_geometry(a), stream);
            break;
        }
        default:
            throw Error(fmt::format("{}: not an operator of deployed CNNs", op_label(op)));
    }
}

}  // namespace iostune
