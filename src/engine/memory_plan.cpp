// The engine's memory plan: weights converted once to the plan's type and layout, one
// activation buffer per op output (or a channel slice of a concat's output), and the graph
// input as the ops read it (padded channels included) beside the caller's float NCHW buffers.
#include <fmt/format.h>

#include <algorithm>

#include "src/engine/engine_impl.h"
#include "src/operator_info.h"

namespace iostune {

namespace {

constexpr int kChannelMultiple = 8;  // what tensor-core kernels want of a 16-bit NHWC input

DeviceBuffer upload_floats(const std::vector<float>& host, const std::string& what) {
    DeviceBuffer buffer(host.size() * sizeof(float));
    if (!host.empty()) {
        IOSTUNE_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), buffer.bytes(),
                                      cudaMemcpyHostToDevice),
                           fmt::format("uploading {}", what));
    }
    return buffer;
}

}  // namespace

TensorView Engine::Impl::packed(void* data, const Shape& s) const {
    return packed_view(data, dtype, layout, s.n, s.c, s.h, s.w);
}

DeviceBuffer Engine::Impl::allocate(const Shape& s) const {
    return DeviceBuffer(size_t(s.elements()) * size_t(dtype_bytes(dtype)));
}

DeviceBuffer Engine::Impl::upload_filter(const std::vector<float>& kcrs, int k, int c, int r, int s,
                                         int stored_channels, const std::string& what) const {
    const DeviceBuffer source = upload_floats(kcrs, what);
    DeviceBuffer stored = allocate(Shape{k, stored_channels, r, s});
    const TensorView target = packed(stored.get(), Shape{k, stored_channels, r, s});
    const std::string context = fmt::format("converting {}", what);
    if (stored_channels != c)
        IOSTUNE_CUDA_CHECK(cudaMemset(stored.get(), 0, stored.bytes()), context);
    // A filter is a [k, c, r, s] tensor: KCRS is its NCHW form, KRSC its NHWC form.
    launch_convert(packed_view(source.get(), DType::F32, TensorLayout::Nchw, k, c, r, s),
                   target.channels(0, c), nullptr);
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), context);  // before `source` is freed
    return stored;
}

DeviceBuffer Engine::Impl::upload_vector(const std::vector<float>& values,
                                         const std::string& what) const {
    const int count = int(values.size());
    return upload_filter(values, 1, count, 1, 1, count, what);
}

// A depthwise filter [c, 1, kh, kw] (KCRS) as [kh, kw, c], for the channels-last depthwise kernel.
DeviceBuffer Engine::Impl::upload_depthwise(const std::vector<float>& kcrs, int c, int kh, int kw,
                                            const std::string& what) const {
    const size_t taps = size_t(kh) * size_t(kw);
    std::vector<float> rsc(kcrs.size());
    for (size_t ch = 0; ch < size_t(c); ++ch)
        for (size_t t = 0; t < taps; ++t) rsc[t * size_t(c) + ch] = kcrs[ch * taps + t];
    return upload_vector(rsc, what + " (depthwise kernel)");
}

void Engine::Impl::upload_weights() {
    weights.resize(size_t(graph.size()));
    for (const Op& op : graph.ops()) {
        const auto& params = graph.params_of(op.id);
        const std::string what = fmt::format("the weights of op {} '{}'", op.id, op.name);
        OpWeights& w = weights[size_t(op.id)];
        const auto dims = param_shapes(graph, op.id);
        switch (op.kind) {
            case OpKind::Conv: {
                const auto& a = op.as<ConvAttrs>();
                const auto& d = dims.at(0);  // [Cout, Cin/groups, kh, kw]
                // A convolution of the (channel-padded) graph input reads every stored channel.
                const int stored =
                    is_graph_input(op.inputs[0])
                        ? input_ports[size_t(graph_input_index(op.inputs[0]))].view.c / a.groups
                        : d[1];
                w.weight = upload_filter(params.at(0).values, d[0], d[1], d[2], d[3], stored, what);
                if (a.bias) w.bias = upload_vector(params.at(1).values, what);
                if (a.prelu) w.slope = upload_vector(params.back().values, what);
                const int in_c = graph.tensor_shape(op.inputs[0]).c;
                if (layout == TensorLayout::Nhwc && a.groups == in_c && a.out_channels == in_c)
                    w.depthwise = upload_depthwise(params.at(0).values, in_c, d[2], d[3], what);
                break;
            }
            case OpKind::Linear: {
                // [out, C*H*W] over the input flattened in NCHW order: stored as a filter
                // [out, C, H, W], so the NHWC form matches a channels-last input's order.
                const Shape& in = graph.tensor_shape(op.inputs[0]);
                const int out = op.as<LinearAttrs>().out_features;
                w.weight = upload_filter(params.at(0).values, out, in.c, in.h, in.w, in.c, what);
                if (op.as<LinearAttrs>().bias) w.bias = upload_vector(params.at(1).values, what);
                break;
            }
            case OpKind::SepConv: {
                const auto& dw = dims.at(0);  // [Cin, 1, k, k]
                const auto& pw = dims.at(1);  // [Cout, Cin, 1, 1]
                w.weight = upload_filter(params.at(0).values, dw[0], dw[1], dw[2], dw[3], dw[1], what);
                w.weight2 = upload_filter(params.at(1).values, pw[0], pw[1], pw[2], pw[3], pw[1], what);
                if (layout == TensorLayout::Nhwc)
                    w.depthwise = upload_depthwise(params.at(0).values, dw[0], dw[2], dw[3], what);
                if (op.as<SepConvAttrs>().bias) w.bias = upload_vector(params.at(2).values, what);
                break;
            }
            case OpKind::ConvTranspose: {
                const auto& d = dims.at(0);  // [Cin, Cout/groups, kh, kw]: cuDNN's [k, c, r, s]
                w.weight = upload_filter(params.at(0).values, d[0], d[1], d[2], d[3], d[1], what);
                if (op.as<ConvTransposeAttrs>().bias)
                    w.bias = upload_vector(params.at(1).values, what);
                break;
            }
            case OpKind::ChannelAffine:  // scale, shift
            case OpKind::ChannelNorm:    // gamma, beta
            case OpKind::GroupNorm:      // gamma, beta
                w.weight = upload_vector(params.at(0).values, what);
                w.bias = upload_vector(params.at(1).values, what);
                break;
            case OpKind::PRelu:
                w.slope = upload_vector(params.at(0).values, what);
                break;
            default:
                break;
        }
    }
}

void Engine::Impl::place_channel_slices(std::vector<TensorView>& v) const {
    for (const Op& op : graph.ops()) {  // in order, so a slice of a slice finds its input placed
        if (op.kind != OpKind::ChannelSlice) continue;
        const int in = op.inputs.at(0);
        const TensorView& source =
            is_graph_input(in) ? input_ports[size_t(graph_input_index(in))].view : v[size_t(in)];
        const auto& a = op.as<ChannelSliceAttrs>();
        v[size_t(op.id)] = source.channels(a.begin, a.end - a.begin);
    }
}

// One buffer per op output, except ops whose only consumer is a Concat: they write into their
// channel slice of its output. Resolved from the last op backwards so that nested concats chain
// their slices.
void Engine::Impl::plan_memory() {
    const int n = graph.size();
    const auto consumers = graph.consumers();
    struct Slice { int concat = -1; int first_channel = 0; };
    std::vector<Slice> slice(static_cast<size_t>(n));
    if (options.concat_in_place) {
        for (const Op& op : graph.ops()) {
            if (op.kind != OpKind::Concat) continue;
            int offset = 0;
            for (int in : op.inputs) {
                // A channel slice is a view of its input's buffer, never written: the concat
                // copies it.
                const bool sole_use =
                    !is_graph_input(in) && graph.op(in).kind != OpKind::ChannelSlice &&
                    consumers[size_t(in)] == std::vector<int>{op.id} &&
                    std::count(op.inputs.begin(), op.inputs.end(), in) == 1;
                if (sole_use) slice[size_t(in)] = {op.id, offset};
                offset += graph.tensor_shape(in).c;
            }
        }
    }

    // Each graph input: the caller's float NCHW buffer, and the native one ops read when the
    // storage differs or the channels are padded.
    input_ports.resize(size_t(graph.input_count()));
    for (int k = 0; k < graph.input_count(); ++k) {
        InputPort& port = input_ports[size_t(k)];
        const Shape& in_shape = graph.input_shape(k);
        port.float_buffer = DeviceBuffer(size_t(in_shape.elements()) * sizeof(float));
        port.float_view = packed_view(port.float_buffer.get(), DType::F32, TensorLayout::Nchw,
                                      in_shape.n, in_shape.c, in_shape.h, in_shape.w);
        // A residual convolution's z (its input 1) is added as it is: it must not be padded.
        bool only_dense_convs_read_input = true;
        for (const Op& op : graph.ops())
            for (size_t i = 0; i < op.inputs.size(); ++i)
                if (op.inputs[i] == graph_input_id(k) &&
                    (op.kind != OpKind::Conv || op.as<ConvAttrs>().groups != 1 || i != 0))
                    only_dense_convs_read_input = false;
        Shape stored_in = in_shape;
        if (options.pad_input_channels && layout == TensorLayout::Nhwc && dtype != DType::F32 &&
            in_shape.c % kChannelMultiple != 0 && only_dense_convs_read_input)
            stored_in.c = (in_shape.c + kChannelMultiple - 1) / kChannelMultiple * kChannelMultiple;
        if (dtype == DType::F32 && layout == TensorLayout::Nchw && stored_in == in_shape) {
            port.view = port.float_view;
        } else {
            port.native_buffer = allocate(stored_in);
            // The padded channels stay zero: nothing but this memset writes them.
            IOSTUNE_CUDA_CHECK(cudaMemset(port.native_buffer.get(), 0, port.native_buffer.bytes()),
                               "clearing the engine's input buffer");
            port.view = packed(port.native_buffer.get(), stored_in);
            port.convert = true;
        }
        port.logical_view = port.view.channels(0, in_shape.c);
    }

    outputs.resize(size_t(n));
    views.resize(size_t(n));
    for (int id = n - 1; id >= 0; --id) {
        const Shape& s = graph.op(id).output;
        const Slice& sl = slice[size_t(id)];
        if (sl.concat >= 0) {
            views[size_t(id)] = views[size_t(sl.concat)].channels(sl.first_channel, s.c);
        } else if (graph.op(id).kind != OpKind::ChannelSlice) {
            outputs[size_t(id)] = allocate(s);
            views[size_t(id)] = packed(outputs[size_t(id)].get(), s);
        }
    }
    place_channel_slices(views);
    base_views = views;

    // The caller's float NCHW outputs, when the storage is anything else or the output is a
    // strided view (a channel slice).
    for (int id : graph.outputs()) {
        OutputPort port;
        port.op = id;
        if (dtype != DType::F32 || layout != TensorLayout::Nchw || !views[size_t(id)].packed()) {
            const Shape& out = graph.op(id).output;
            port.float_buffer = DeviceBuffer(size_t(out.elements()) * sizeof(float));
            port.float_view = packed_view(port.float_buffer.get(), DType::F32, TensorLayout::Nchw,
                                          out.n, out.c, out.h, out.w);
            port.convert = true;
        }
        output_ports.push_back(std::move(port));
    }

    execs.resize(size_t(n));
    for (int id = 0; id < n; ++id) {
        OpPlan& plan = execs[size_t(id)].plan;
        plan.op_id = id;
        plan.name = graph.op(id).name;
        plan.kind = graph.op(id).kind;
        plan.writes_into_concat = slice[size_t(id)].concat >= 0;
        plan.storage = fmt::format("{} {}", to_string(dtype), to_string(layout));
    }
}

}  // namespace iostune
