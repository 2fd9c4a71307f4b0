// Each op's execution plan (what runs it: cuDNN, cuBLAS or an engine kernel, on which views) and
// its launch.
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "src/engine/engine_impl.h"
#include "src/error.h"

namespace iostune {

namespace engine_internal {

std::string op_label(const Op& op) {
    return fmt::format("running op {} '{}' ({})", op.id, op.name, to_string(op.kind));
}

// Copies a (possibly channel-sliced) view into another of equal shape and storage. NCHW rows are
// whole batch items: one 2-D memcpy. NHWC rows are single pixels, too short for a memcpy row:
// the copy kernel.
void copy_view(const TensorView& src, const TensorView& dst, cudaStream_t stream,
               const std::string& context) {
    if (src.nhwc()) {
        launch_copy(src, dst, false, stream);
        return;
    }
    IOSTUNE_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, size_t(dst.row_pitch_bytes()), src.data,
                                         size_t(src.row_pitch_bytes()), size_t(src.row_bytes()),
                                         size_t(src.rows()), cudaMemcpyDeviceToDevice, stream),
                       context);
}

void require_workspace(const ConvStep& step, const DeviceBuffer& workspace) {
    if (step.workspace_bytes > workspace.bytes())
        throw Error(fmt::format("internal error: {} needs a workspace of {} bytes but its slot "
                                "holds {} (the workspaces were not grown after planning)",
                                step.context, step.workspace_bytes, workspace.bytes()));
}

}  // namespace engine_internal

using engine_internal::copy_view;
using engine_internal::require_workspace;
using engine_internal::op_label;

namespace {

Shape shape_of(const TensorView& v) { return Shape{v.n, v.c, v.h, v.w}; }

cudaDataType_t cublas_type(DType type) {
    switch (type) {
        case DType::F16: return CUDA_R_16F;
        case DType::BF16: return CUDA_R_16BF;
        default: return CUDA_R_32F;
    }
}

// A linear layer of at most kLinearRowsMax rows runs on the engine's kernel (one launch, the
// weights read once, bias fused) instead of cuBLAS's product and the bias kernel.
// IOSTUNE_LINEAR_KERNEL=cublas keeps cuBLAS for every batch (the A/B in docs/search-log.md, "A
// classifier's head in fewer launches").
bool linear_rows_kernel(int rows) {
    static const bool cublas_only = [] {
        const char* v = std::getenv("IOSTUNE_LINEAR_KERNEL");
        return v != nullptr && std::string(v) == "cublas";
    }();
    return !cublas_only && rows <= kLinearRowsMax;
}

}  // namespace

std::vector<TensorView> Engine::Impl::current_views(const Op& op) const {
    std::vector<TensorView> v;
    for (int i : op.inputs) v.push_back(tensor(i));
    v.push_back(views[size_t(op.id)]);
    return v;
}

void* Engine::Impl::scratch_buffer(void* planned, const Op& op, const char* what) const {
    if (planned == nullptr)
        throw InternalError(fmt::format("{} needs a {} the memory plan does not hold "
                                "(the planner and the engine disagree on where its views are "
                                "strided); please report it with the model",
                                op_label(op), what));
    return planned;
}

void Engine::Impl::plan_op(const Op& op) {
    OpExec& exec = execs[size_t(op.id)];
    // Recorded only once the op is planned: a plan that throws half-way (a convolution cuDNN
    // fails to run while it is timed) must be planned again by the next re-plan at these
    // views, not taken as done and left without its convolutions.
    std::vector<TensorView> planned_views = current_views(op);
    exec.planned_views.clear();
    exec.scratch = scratch_of(op.id);
    const std::string context = op_label(op);
    const TensorView& out = views[size_t(op.id)];
    const TensorView& in = tensor(op.inputs.at(0));
    const OpWeights& w = weights_of(op.id);
    switch (op.kind) {
        case OpKind::Conv: {
            const auto& a = op.as<ConvAttrs>();
            ConvSpec spec{a.out_channels, in.c / a.groups, a.kernel_h, a.kernel_w,
                          ConvGeometry{a.pad_h, a.pad_w, a.stride_h, a.stride_w, a.dilation_h,
                                       a.dilation_w, a.groups},
                          w.weight.get(), a.bias ? w.bias.get() : nullptr, a.relu};
            spec.depthwise_weight = w.depthwise.get();
            if (a.residual) spec.residual = tensor(op.inputs.at(1));
            spec.activation = a.activation;
            if (a.prelu) spec.prelu_slope = w.slope.get();
            const ConvStaging staging{exec.scratch.staged_input, exec.scratch.staged_output};
            exec.convs.push_back(plan_conv(context, in, out, spec, staging));
            record_conv(exec.plan, exec.convs.back());
            break;
        }
        case OpKind::SepConv: {
            const auto& a = op.as<SepConvAttrs>();
            const TensorView dw_out = depthwise_output(op);
            ConvSpec depthwise{in.c, 1, a.kernel, a.kernel,
                               ConvGeometry{a.pad, a.pad, a.stride, a.stride, a.dilation,
                                            a.dilation, in.c},
                               w.weight.get(), nullptr, false, a.pre_relu, w.depthwise.get()};
            ConvSpec pointwise{a.out_channels, in.c, 1, 1, ConvGeometry{}, w.weight2.get(),
                               a.bias ? w.bias.get() : nullptr, a.post_relu};
            exec.convs.push_back(plan_conv(context + " depthwise", in, dw_out, depthwise,
                                           {exec.scratch.staged_input, nullptr}));
            exec.convs.push_back(plan_conv(context + " pointwise", dw_out, out, pointwise,
                                           {nullptr, exec.scratch.staged_output}));
            for (const ConvStep& s : exec.convs) record_conv(exec.plan, s);
            break;
        }
        case OpKind::MaxPool:
        case OpKind::AvgPool: {
            const auto& a = op.as<PoolAttrs>();
            PoolWindow& win = exec.window;
            win.max = op.kind == OpKind::MaxPool;
            win.count_include_pad = a.count_include_pad;
            if (a.global) {
                win.kernel_h = in.h, win.kernel_w = in.w;
            } else {
                win.kernel_h = a.kernel_h, win.kernel_w = a.kernel_w;
                win.stride_h = a.stride_h, win.stride_w = a.stride_w;
                win.pad_h = a.pad_h, win.pad_w = a.pad_w;
            }
            // cuDNN rounds the output size down; with ceil_mode the extra window is ours.
            // Channels-last pooling is the engine's kernel too (coalesced over channels, and it
            // writes strided concat slices, as PyTorch's channels-last pooling does).
            const int floor_h = (in.h + 2 * win.pad_h - win.kernel_h) / win.stride_h + 1;
            const int floor_w = (in.w + 2 * win.pad_w - win.kernel_w) / win.stride_w + 1;
            if (floor_h == out.h && floor_w == out.w && layout == TensorLayout::Nchw) {
                const cudnnPoolingMode_t mode =
                    win.max ? CUDNN_POOLING_MAX_DETERMINISTIC
                            : (win.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                     : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
                exec.pool_desc.emplace(mode, win.kernel_h, win.kernel_w, win.pad_h, win.pad_w,
                                       win.stride_h, win.stride_w, context);
                exec.x_desc.emplace(in, context);
                exec.y_desc.emplace(out, context);
                exec.plan.path = "cudnnPoolingForward";
            } else {
                exec.plan.path = layout == TensorLayout::Nhwc ? "pool kernel (channels-last)"
                                                              : "pool kernel (ceil_mode)";
            }
            break;
        }
        case OpKind::Softmax:
            exec.x_desc.emplace(in, context);
            exec.y_desc.emplace(out, context);
            exec.plan.path = "cudnnSoftmaxForward";
            break;
        case OpKind::Concat: {
            int offset = 0, in_place = 0, staged = 0;
            for (size_t k = 0; k < op.inputs.size(); ++k) {
                const int src_id = op.inputs[k];
                const TensorView& src = tensor(src_id);
                if (src == out.channels(offset, src.c)) {
                    const bool producer_staged = !is_graph_input(src_id) &&
                                                 !execs[size_t(src_id)].convs.empty() &&
                                                 execs[size_t(src_id)].convs.back().output_staged();
                    producer_staged ? ++staged : ++in_place;
                } else {
                    exec.concat_copies.push_back(int(k));
                }
                offset += src.c;
            }
            exec.plan.path = fmt::format("concat: {} in place, {} copied", in_place,
                                         exec.concat_copies.size());
            if (staged > 0) exec.plan.path += fmt::format(", {} staged by their producer", staged);
            break;
        }
        case OpKind::Add:
            exec.plan.path = "add kernel";
            break;
        case OpKind::Relu:
            exec.plan.path = "relu kernel";
            break;
        case OpKind::Identity:
            exec.plan.path = "copy kernel";
            break;
        case OpKind::Activation:
        case OpKind::Binary:
        case OpKind::ChannelAffine:
        case OpKind::ChannelShuffle:
        case OpKind::ChannelSlice:
        case OpKind::Resize:
        case OpKind::ConvTranspose:
        case OpKind::ChannelNorm:
        case OpKind::SpatialPad:
        case OpKind::PRelu:
        case OpKind::GroupNorm:
        case OpKind::RadixSoftmax:
        case OpKind::StridedSlice:
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth:
        case OpKind::Flatten:
            plan_deployed_op(op);
            break;
        case OpKind::Linear:
            // cuBLAS reads each batch item as one contiguous row: a channels-last slice is not.
            if (in.nhwc() && !in.packed()) {
                scratch_buffer(exec.scratch.staged_input, op, "packed copy of its input");
                exec.plan.path = "copy kernel; ";
            }
            if (linear_rows_kernel(in.n))
                exec.plan.path += "linear rows kernel (bias fused)";
            else
                exec.plan.path += dtype == DType::F32
                                      ? "cublasSgemm + bias kernel"
                                      : "cublasGemmEx (fp32 accumulation) + bias kernel";
            break;
    }
    exec.planned_views = std::move(planned_views);
}

TensorView Engine::Impl::depthwise_output(const Op& op) const {
    const TensorView& in = tensor(op.inputs.at(0));
    const TensorView& out = views[size_t(op.id)];
    return packed(scratch_buffer(execs[size_t(op.id)].scratch.depthwise_output, op,
                                 "depthwise output"),
                  Shape{out.n, in.c, out.h, out.w});
}

// Only the addresses changed (another plan's places of the same shapes, strides and
// alignments): the op's convolutions are pointed at them, keeping their choices. Other ops'
// plans hold no address.
bool Engine::Impl::rebind_convs(const Op& op, const std::vector<TensorView>& now) {
    OpExec& exec = execs[size_t(op.id)];
    const TensorView& in = now.front();
    const TensorView& out = now.back();
    if (op.kind == OpKind::Conv && exec.convs.size() == 1) {
        const auto& a = op.as<ConvAttrs>();
        const std::optional<TensorView> z = a.residual ? std::optional<TensorView>(now.at(1))
                                                       : std::nullopt;
        return exec.convs[0].rebind(in, out, z,
                                    {exec.scratch.staged_input, exec.scratch.staged_output});
    }
    if (op.kind == OpKind::SepConv && exec.convs.size() == 2) {
        const TensorView dw_out = depthwise_output(op);
        return exec.convs[0].rebind(in, dw_out, std::nullopt,
                                    {exec.scratch.staged_input, nullptr}) &&
               exec.convs[1].rebind(dw_out, out, std::nullopt,
                                    {nullptr, exec.scratch.staged_output});
    }
    return false;
}

void Engine::Impl::replan_op(const Op& op) {
    OpExec& exec = execs[size_t(op.id)];
    const std::vector<TensorView> now = current_views(op);
    const ScratchPointers scratch = scratch_of(op.id);
    if (now == exec.planned_views && scratch == exec.scratch) return;
    exec.scratch = scratch;  // what rebind_convs points the convolutions at
    if (rebind_convs(op, now)) {
        exec.planned_views = now;
        return;
    }
    OpExec old = std::move(exec);
    exec = OpExec{};
    exec.plan.op_id = old.plan.op_id;
    exec.plan.name = old.plan.name;
    exec.plan.kind = old.plan.kind;
    exec.plan.writes_into_concat = old.plan.writes_into_concat;
    exec.plan.storage = old.plan.storage;
    for (ConvStep& step : old.convs) retire(std::move(step));
    if (old.conv_transpose && captured)
        retired_transposes.push_back(std::move(*old.conv_transpose));
    plan_op(op);
}

void Engine::Impl::run_op(int id, Lane& lane, const DeviceBuffer& workspace, cudaStream_t stream) {
    const Op& op = graph.op(id);
    const OpExec& exec = execs[size_t(id)];
    const TensorView& out = views[size_t(id)];
    const TensorView& in = tensor(op.inputs.at(0));
    const float one = 1.0f, zero = 0.0f;
    switch (op.kind) {
        case OpKind::Conv:
        case OpKind::SepConv:
            // Never silently skipped: a plan that failed half-way leaves none (plan_op).
            if (exec.convs.size() != (op.kind == OpKind::Conv ? 1u : 2u))
                throw InternalError(fmt::format("{} runs without its planned convolutions; "
                                                "please report it with the model", op_label(op)));
            lane.cudnn.set_stream(stream);
            for (const ConvStep& step : exec.convs) {
                require_workspace(step, workspace);
                step.run(lane.cudnn.get(), workspace.get(), stream);
            }
            break;
        case OpKind::MaxPool:
        case OpKind::AvgPool:
            if (exec.pool_desc) {
                lane.cudnn.set_stream(stream);
                IOSTUNE_CUDNN_CHECK(cudnnPoolingForward(lane.cudnn.get(), exec.pool_desc->get(),
                                                        &one, exec.x_desc->get(), in.data, &zero,
                                                        exec.y_desc->get(), out.data),
                                    op_label(op));
            } else {
                launch_pool2d(in, out, exec.window, stream);
            }
            break;
        case OpKind::Softmax:
            lane.cudnn.set_stream(stream);
            IOSTUNE_CUDNN_CHECK(cudnnSoftmaxForward(lane.cudnn.get(), CUDNN_SOFTMAX_ACCURATE,
                                                    CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                                    exec.x_desc->get(), in.data, &zero,
                                                    exec.y_desc->get(), out.data),
                                op_label(op));
            break;
        case OpKind::Concat: {
            int offset = 0;
            size_t next_copy = 0;
            for (size_t k = 0; k < op.inputs.size(); ++k) {
                const TensorView& src = tensor(op.inputs[k]);
                if (next_copy < exec.concat_copies.size() && exec.concat_copies[next_copy] == int(k)) {
                    copy_view(src, out.channels(offset, src.c), stream, op_label(op));
                    ++next_copy;
                }
                offset += src.c;
            }
            break;
        }
        case OpKind::Add: {
            std::vector<TensorView> inputs;
            inputs.reserve(op.inputs.size());
            for (int i : op.inputs) inputs.push_back(tensor(i));
            launch_add(inputs, out, op.as<AddAttrs>().relu, stream);
            break;
        }
        case OpKind::Relu:
            launch_copy(in, out, true, stream);
            break;
        case OpKind::Identity:
            launch_copy(in, out, false, stream);
            break;
        case OpKind::Activation:
        case OpKind::Binary:
        case OpKind::ChannelAffine:
        case OpKind::ChannelShuffle:
        case OpKind::ChannelSlice:
        case OpKind::Resize:
        case OpKind::ConvTranspose:
        case OpKind::ChannelNorm:
        case OpKind::SpatialPad:
        case OpKind::PRelu:
        case OpKind::GroupNorm:
        case OpKind::RadixSoftmax:
        case OpKind::StridedSlice:
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth:
        case OpKind::Flatten:
            run_deployed_op(op, lane, workspace, stream);
            break;
        case OpKind::Linear: {
            const auto& a = op.as<LinearAttrs>();
            const int k = in.c * in.h * in.w;
            const OpWeights& w = weights_of(id);
            TensorView x = in;
            if (in.nhwc() && !in.packed()) {  // cuBLAS reads packed rows
                x = packed(exec.scratch.staged_input, shape_of(in));
                launch_copy(in, x, false, stream);
            }
            const int ldx = int(x.batch_stride()), ldy = int(out.batch_stride());
            if (linear_rows_kernel(in.n)) {
                launch_linear_rows(x.data, ldx, w.weight.get(), a.bias ? w.bias.get() : nullptr,
                                   out.data, ldy, in.n, k, a.out_features, dtype, stream);
                break;
            }
            lane.cublas.set_stream(stream);
            // Row-major y[N, out] = x[N, K] W[out, K]^T, written column-major as y^T = W^T' x^T
            // with W read transposed. A batch item's K inputs are contiguous in either layout
            // (the weights were stored in the input's channel order), and its outputs too.
            if (dtype == DType::F32) {
                IOSTUNE_CUBLAS_CHECK(cublasSgemm(lane.cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N,
                                                 a.out_features, in.n, k, &one,
                                                 w.weight.floats(), k,
                                                 static_cast<const float*>(x.data), ldx, &zero,
                                                 static_cast<float*>(out.data), ldy),
                                     op_label(op));
            } else {
                const cudaDataType_t type = cublas_type(dtype);
                IOSTUNE_CUBLAS_CHECK(
                    cublasGemmEx(lane.cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, a.out_features,
                                 in.n, k, &one, w.weight.get(), type, k, x.data, type, ldx, &zero,
                                 out.data, type, ldy, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    op_label(op));
            }
            if (a.bias) launch_bias_activation(out, w.bias.get(), false, stream);
            break;
        }
    }
}

}  // namespace iostune
