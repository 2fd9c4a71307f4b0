#include "search/op_estimate.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"
#include "src/operator_info.h"

namespace iostune {

namespace {

constexpr double kFloat = 4.0;              // bytes per fp32 element
constexpr int kElementwiseThreads = 256;
constexpr int kElementsPerThread = 4;       // vectorised float4 access
constexpr int kElementsPerBlock = kElementwiseThreads * kElementsPerThread;
constexpr int kGemmTileK = 32;              // K-slice staged in shared memory, double-buffered

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Tile edge for a GEMM dimension: the next power of two, between 16 and 64. Small problems get
// small tiles (more blocks, less padding), as cuDNN/cuBLAS heuristics pick.
int tile_edge(int64_t extent) {
    int edge = 16;
    while (edge < 64 && edge < extent) edge *= 2;
    return edge;
}

// Implicit-GEMM kernel: C[M x N] = A[M x K] * B[K x N].
KernelEstimate gemm_kernel(int64_t m, int64_t n, int64_t k, double useful_flops, double bytes) {
    const int tm = tile_edge(m), tn = tile_edge(n);
    KernelEstimate e;
    e.what = "gemm";
    e.blocks = ceil_div(m, tm) * ceil_div(n, tn);
    e.threads = std::max(32, tm * tn / 32);
    e.registers_per_thread = 32 + 2 * (tm * tn / e.threads);
    e.shared_mem_bytes = int(2 * (tm + tn) * kGemmTileK * kFloat);
    e.block_flops = 2.0 * tm * tn * double(k);
    e.block_bytes = (double(tm + tn) * double(k) + double(tm) * tn) * kFloat;
    e.flops = useful_flops;
    e.bytes = bytes;
    e.gemm = true;
    return e;
}

// One thread per output element group: elementwise ops, pooling windows, depthwise convolution.
KernelEstimate elementwise_kernel(const std::string& what, int64_t outputs, double flops_per_output,
                                  double bytes_per_output, int registers) {
    KernelEstimate e;
    e.what = what;
    e.blocks = std::max<int64_t>(1, ceil_div(outputs, kElementsPerBlock));
    e.threads = kElementwiseThreads;
    e.registers_per_thread = registers;
    e.block_flops = flops_per_output * kElementsPerBlock;
    e.block_bytes = bytes_per_output * kElementsPerBlock;
    e.flops = flops_per_output * double(outputs);
    e.bytes = bytes_per_output * double(outputs);
    return e;
}

// One block per (image, channel) reducing its whole plane: global pooling.
KernelEstimate reduce_kernel(int64_t planes, int64_t plane_size) {
    KernelEstimate e;
    e.what = "reduce";
    e.blocks = planes;
    e.threads = kElementwiseThreads;
    e.registers_per_thread = 32;
    e.block_flops = double(plane_size);
    e.block_bytes = double(plane_size + 1) * kFloat;
    e.flops = double(planes * plane_size);
    e.bytes = double(planes * (plane_size + 1)) * kFloat;
    return e;
}

KernelEstimate conv_kernel(const Shape& in, const Shape& out, const ConvAttrs& a) {
    const int64_t k = int64_t(in.c / a.groups) * a.kernel_h * a.kernel_w;
    // A residual convolution adds z (read once, of the output's size) in its epilogue.
    const double residual = a.residual ? 1.0 : 0.0;
    const double epilogue = (a.bias ? 1.0 : 0.0) + (a.relu ? 1.0 : 0.0) + residual +
                            (a.prelu ? 2.0 : 0.0) +
                            (a.activation ? double(activation_flops(*a.activation)) : 0.0);
    const double weights = double(a.out_channels) * double(k) * kFloat;
    if (a.groups == 1) {
        const int64_t m = int64_t(out.n) * out.h * out.w;
        const double useful = double(out.elements()) * (2.0 * double(k) + epilogue);
        const double bytes =
            double(in.elements() + out.elements()) * kFloat +
            residual * double(out.elements()) * kFloat + weights;
        return gemm_kernel(m, a.out_channels, k, useful, bytes);
    }
    // Grouped/depthwise convolutions run as direct kernels on CUDA cores.
    const double outs = double(out.elements());
    const double per_output_bytes =
        kFloat * (1.0 + residual) + (double(in.elements()) * kFloat + weights) / outs;
    return elementwise_kernel("direct", out.elements(), 2.0 * double(k) + epilogue,
                              per_output_bytes, 40);
}

}  // namespace

std::vector<KernelEstimate> op_kernels(const Graph& graph, int op_id) {
    if (op_id < 0 || op_id >= graph.size())
        throw Error(fmt::format("op {} is not in graph '{}' ({} ops)", op_id, graph.name(),
                                graph.size()));
    const Op& op = graph.op(op_id);
    const Shape& out = op.output;
    const Shape& in = graph.tensor_shape(op.inputs.empty() ? kGraphInput : op.inputs.front());
    const int64_t outs = out.elements();
    const double in_per_out = double(in.elements()) / double(std::max<int64_t>(outs, 1));
    switch (op.kind) {
        case OpKind::Conv: return {conv_kernel(in, out, op.as<ConvAttrs>())};
        case OpKind::SepConv: {
            const auto& a = op.as<SepConvAttrs>();
            std::vector<KernelEstimate> kernels;
            if (a.pre_relu)
                kernels.push_back(elementwise_kernel("elementwise", in.elements(), 1.0,
                                                     2 * kFloat, 32));
            ConvAttrs depthwise;
            depthwise.out_channels = in.c;
            depthwise.kernel_h = depthwise.kernel_w = a.kernel;
            depthwise.stride_h = depthwise.stride_w = a.stride;
            depthwise.pad_h = depthwise.pad_w = a.pad;
            depthwise.dilation_h = depthwise.dilation_w = a.dilation;
            depthwise.groups = in.c;
            depthwise.bias = false;
            const Shape mid{out.n, in.c, out.h, out.w};
            kernels.push_back(conv_kernel(in, mid, depthwise));
            ConvAttrs pointwise;
            pointwise.out_channels = a.out_channels;
            pointwise.bias = a.bias;
            pointwise.relu = a.post_relu;
            kernels.push_back(conv_kernel(mid, out, pointwise));
            return kernels;
        }
        case OpKind::MaxPool:
        case OpKind::AvgPool: {
            const auto& a = op.as<PoolAttrs>();
            if (a.global) return {reduce_kernel(int64_t(in.n) * in.c, int64_t(in.h) * in.w)};
            return {elementwise_kernel("elementwise", outs, double(a.kernel_h) * a.kernel_w,
                                       kFloat * (1.0 + in_per_out), 32)};
        }
        case OpKind::Add: {
            const double inputs = double(op.inputs.size());
            const double relu = op.as<AddAttrs>().relu ? 1.0 : 0.0;
            return {elementwise_kernel("elementwise", outs, inputs - 1.0 + relu,
                                       kFloat * (inputs + 1.0), 32)};
        }
        case OpKind::Relu: return {elementwise_kernel("elementwise", outs, 1.0, 2 * kFloat, 32)};
        case OpKind::Softmax:  // max, exp-sum, normalise: the input is read twice
            return {elementwise_kernel("elementwise", outs, 3.0, 3 * kFloat, 32)};
        case OpKind::Concat:
        case OpKind::Identity:
            return {elementwise_kernel("elementwise", outs, 0.0, 2 * kFloat, 32)};
        case OpKind::Activation:
        case OpKind::Binary:
        case OpKind::ChannelAffine:
        case OpKind::ChannelShuffle:
        case OpKind::ChannelSlice:
        case OpKind::Resize:
        case OpKind::SpatialPad:
        case OpKind::ChannelNorm:
        case OpKind::PRelu:
        case OpKind::RadixSoftmax:
        case OpKind::StridedSlice:
        case OpKind::DepthToSpace:
        case OpKind::SpaceToDepth:
        case OpKind::Flatten: {
            // One pass over the output; operator_info's counts spread over its elements (a
            // broadcast or per-channel operand adds little, a channel norm reads its input twice).
            const double per_out = 1.0 / double(std::max<int64_t>(outs, 1));
            const double reads = op.kind == OpKind::ChannelNorm ? 2.0 : 1.0;
            return {elementwise_kernel("elementwise", outs, double(flops(graph, op_id)) * per_out,
                                       double(bytes_moved(graph, op_id)) * per_out * reads, 32)};
        }
        case OpKind::GroupNorm: {
            // A block per (image, group) reduces its channels and pixels (mean, then variance),
            // then every element is normalised: the input read three times, the output written.
            const auto& a = op.as<GroupNormAttrs>();
            const int64_t planes = int64_t(in.n) * a.groups;
            const int64_t group_size = in.elements() / std::max<int64_t>(planes, 1);
            KernelEstimate k = reduce_kernel(planes, group_size);
            k.block_flops = 7.0 * double(group_size);
            k.block_bytes = 4.0 * double(group_size) * kFloat;
            k.flops = double(flops(graph, op_id));
            k.bytes = 4.0 * double(in.elements()) * kFloat;
            return {k};
        }
        case OpKind::ConvTranspose: {
            // A GEMM of the input pixels by [Cin, Cout*kh*kw] followed by a scatter-add (what
            // cuDNN's backward-data convolution does); grouped ones run direct.
            const auto& a = op.as<ConvTransposeAttrs>();
            const double useful = double(flops(graph, op_id));
            const double bytes = double(bytes_moved(graph, op_id));
            if (a.groups == 1)
                return {gemm_kernel(int64_t(in.n) * in.h * in.w,
                                    int64_t(a.out_channels) * a.kernel_h * a.kernel_w, in.c,
                                    useful, bytes)};
            return {elementwise_kernel("direct", outs, useful / double(std::max<int64_t>(outs, 1)),
                                       bytes / double(std::max<int64_t>(outs, 1)), 40)};
        }
        case OpKind::Linear: {
            const auto& a = op.as<LinearAttrs>();
            const int64_t k = int64_t(in.c) * in.h * in.w;
            const double weights = double(a.out_features) * double(k) * kFloat;
            const double useful = double(outs) * (2.0 * double(k) + (a.bias ? 1.0 : 0.0));
            const double bytes = double(in.elements() + outs) * kFloat + weights;
            return {gemm_kernel(in.n, a.out_features, k, useful, bytes)};
        }
    }
    throw Error(fmt::format("op '{}': no kernel estimate for kind {}", op.name, to_string(op.kind)));
}

KernelEstimate merged_conv_kernel(const Graph& graph, const std::vector<int>& conv_ids) {
    if (conv_ids.empty()) throw Error("merged_conv_kernel: no convolutions to merge");
    for (int id : conv_ids) {
        const Op& op = graph.op(id);
        if (op.kind != OpKind::Conv)
            throw Error(fmt::format("op '{}' is a {}, only convolutions merge", op.name,
                                    to_string(op.kind)));
    }
    // Same input and spatial size (can_merge checks it); output channels stacked, kernels
    // zero-padded to the largest.
    const Op& first = graph.op(conv_ids.front());
    ConvAttrs merged = first.as<ConvAttrs>();
    merged.out_channels = 0;
    for (int id : conv_ids) {
        const auto& a = graph.op(id).as<ConvAttrs>();
        merged.kernel_h = std::max(merged.kernel_h, a.kernel_h);
        merged.kernel_w = std::max(merged.kernel_w, a.kernel_w);
        merged.out_channels += a.out_channels;
    }
    Shape out = first.output;
    out.c = merged.out_channels;
    return conv_kernel(graph.tensor_shape(first.inputs.front()), out, merged);
}

std::vector<KernelEstimate> batched_sepconv_kernels(const Graph& graph,
                                                    const std::vector<int>& ids) {
    if (ids.empty()) throw Error("batched_sepconv_kernels: no separable convolutions");
    std::vector<KernelEstimate> phases;
    for (int id : ids) {
        const std::vector<KernelEstimate> own = op_kernels(graph, id);
        if (phases.empty()) {
            phases = own;
            continue;
        }
        if (own.size() != phases.size())
            throw Error(fmt::format("op '{}' launches {} kernels, the others {}: not one shape",
                                    graph.op(id).name, own.size(), phases.size()));
        for (size_t k = 0; k < own.size(); ++k) {  // one grid over every member's blocks
            KernelEstimate& p = phases[k];
            p.blocks += own[k].blocks;
            p.block_flops = std::max(p.block_flops, own[k].block_flops);
            p.block_bytes = std::max(p.block_bytes, own[k].block_bytes);
            p.flops += own[k].flops;
            p.bytes += own[k].bytes;
        }
    }
    return phases;
}

// The GEMM peak of a precision: tensor cores for TF32 and 16-bit data, FMA for strict fp32.
double gemm_peak(const DeviceProfile& device, Precision precision) {
    switch (precision) {
        case Precision::Tf32: return device.peak_tf32_flops;
        case Precision::Fp16:
        case Precision::Bf16: return device.peak_fp16_flops;
        default: return device.peak_fp32_flops;
    }
}

KernelTiming time_kernel(const KernelEstimate& kernel, const DeviceProfile& device,
                         Precision precision) {
    double peak = device.peak_fp32_flops;
    if (kernel.gemm) peak = gemm_peak(device, precision) * device.gemm_efficiency;
    // Kernel estimates count fp32 elements; 16-bit storage moves half the bytes.
    const double byte_scale = double(element_bytes(precision)) / kFloat;
    const int resident = resident_blocks_per_sm(device, kernel.threads,
                                                kernel.registers_per_thread,
                                                kernel.shared_mem_bytes);
    if (resident <= 0)
        throw Error(fmt::format("{} kernel block ({} threads, {} B shared memory) does not fit an "
                                "SM of {}",
                                kernel.what, kernel.threads, kernel.shared_mem_bytes, device.name));
    // The busiest SM works through `per_sm` blocks; fewer resident warps than the SM needs to
    // hide latency run it below its share of the peak.
    const int64_t per_sm = ceil_div(std::max<int64_t>(kernel.blocks, 1), device.sm_count);
    const double warps = double(std::min<int64_t>(resident, per_sm)) * ((kernel.threads + 31) / 32);
    const double fill = std::min(1.0, warps / device.warps_to_saturate_sm);
    const double sm_flops = peak / device.sm_count;

    KernelTiming t;
    t.compute_s = double(per_sm) * kernel.block_flops / (sm_flops * fill);
    t.memory_s = byte_scale * std::max(kernel.bytes / device.dram_bandwidth,
                                       double(per_sm) * kernel.block_bytes /
                                           device.per_sm_bandwidth());
    t.time_s = std::max(t.compute_s, t.memory_s) + device.kernel_launch_s;
    t.machine_flops_s = double(kernel.blocks) * kernel.block_flops / peak;
    t.machine_bytes_s = byte_scale * kernel.bytes / device.dram_bandwidth;
    t.resident_blocks_per_sm = resident;
    t.occupancy = double(resident * kernel.threads) / device.max_threads_per_sm;
    t.compute_bound = t.compute_s >= t.memory_s;
    return t;
}

OpResources estimate_op_resources(const Graph& graph, int op_id, const DeviceProfile& device,
                                  Precision precision) {
    const auto kernels = op_kernels(graph, op_id);
    OpResources r;
    r.kernels = int(kernels.size());
    const KernelEstimate* widest = nullptr;
    double longest = -1.0;
    for (const auto& k : kernels) {
        const KernelTiming t = time_kernel(k, device, precision);
        r.kernel_time_ms += t.time_s * 1e3;
        // The op's character is that of the kernel it spends most time in.
        if (t.time_s > longest) {
            longest = t.time_s;
            r.compute_bound = t.compute_bound;
        }
        if (!widest || k.blocks > widest->blocks) widest = &k;
    }
    r.grid_blocks = widest->blocks;
    r.block_threads = widest->threads;
    r.registers_per_thread = widest->registers_per_thread;
    r.shared_mem_bytes = widest->shared_mem_bytes;
    r.occupancy = time_kernel(*widest, device, precision).occupancy;
    r.block_sm_share = block_sm_share(device, r.block_threads, r.registers_per_thread,
                                      r.shared_mem_bytes);
    r.measured = false;
    return r;
}

OpResourceTable estimate_resource_table(const Graph& graph, const DeviceProfile& device,
                                        Precision precision) {
    OpResourceTable table;
    table.source = "sim:" + device.name;
    table.ops.reserve(size_t(graph.size()));
    for (int id = 0; id < graph.size(); ++id)
        table.ops.push_back(estimate_op_resources(graph, id, device, precision));
    return table;
}

}  // namespace iostune
