// Two ops of one shape share their cuDNN shortlist, but never one execution plan across stream
// lanes: run at once from two lanes, a shared plan computed wrong results (a model set whose
// GoogLeNet and ResNet-50 start with the same convolution; graph_conv.cpp, execution_plan).
#include <catch2/catch.hpp>

#include <vector>

#include "src/engine/cuda_stream.h"
#include "src/engine/cudnn_descriptors.h"
#include "src/engine/cudnn_handle.h"
#include "src/engine/device_buffer.h"
#include "src/engine/graph_conv.h"
#include "src/engine/kernels.h"

using namespace iostune;

namespace {
constexpr int kChannels = 64, kSide = 56;  // ResNet-50's layer1 3x3 convolution, batch 1
constexpr size_t kWorkspace = size_t(64) << 20;

DeviceBuffer activation() { return DeviceBuffer(size_t(kChannels) * kSide * kSide * 4); }
TensorView nhwc(const DeviceBuffer& b) {
    return packed_view(b.get(), DType::F32, TensorLayout::Nhwc, 1, kChannels, kSide, kSide);
}
std::vector<float> host_copy(const DeviceBuffer& b) {
    std::vector<float> host(b.bytes() / 4);
    IOSTUNE_CUDA_CHECK(cudaMemcpy(host.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost), "read");
    return host;
}
}  // namespace

TEST_CASE("ops of one shape run their own execution plan on each stream lane", "[gpu][engine]") {
    const DeviceBuffer weight(size_t(kChannels) * kChannels * 9 * 4);
    const DeviceBuffer in_a = activation(), in_b = activation();
    const DeviceBuffer out_a = activation(), out_b = activation();
    const DeviceBuffer workspace_a(kWorkspace), workspace_b(kWorkspace);
    for (const DeviceBuffer* b : {&weight, &in_a, &in_b})
        launch_fill_uniform(b->get(), int64_t(b->bytes() / 4), DType::F32, b->bytes(), nullptr);
    ConvGeometry g;
    g.pad_h = g.pad_w = 1;
    const GraphConv a(nhwc(in_a), nhwc(out_a), weight.get(), 3, 3, g, {}, Precision::Tf32,
                      kWorkspace, "op a");
    const GraphConv b(nhwc(in_b), nhwc(out_b), weight.get(), 3, 3, g, {}, Precision::Tf32,
                      kWorkspace, "op b");
    REQUIRE(a.candidates() > 0);

    CudaStream stream0, stream1;
    CudnnHandle lane0, lane1;
    lane0.set_stream(stream0.get());
    lane1.set_stream(stream1.get());
    GraphConv::register_lane(lane0.get(), 0);
    GraphConv::register_lane(lane1.get(), 1);

    // Lane 0 runs the shared plan; lane 1 a copy of its own, which every op of that shape on
    // lane 1 runs (a lane runs one launch at a time).
    CHECK(a.execution_plan(lane0.get()) == b.execution_plan(lane0.get()));
    CHECK(a.execution_plan(lane1.get()) != a.execution_plan(lane0.get()));
    CHECK(a.execution_plan(lane1.get()) == b.execution_plan(lane1.get()));

    // The copy computes what the shared plan computes, beside it (the inputs hold the same
    // values: filled with one seed).
    a.run(lane0.get(), workspace_a.get());
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "op a alone");
    const std::vector<float> expected = host_copy(out_a);
    for (int round = 0; round < 50; ++round) {
        a.run(lane1.get(), workspace_a.get());
        b.run(lane0.get(), workspace_b.get());
    }
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "ops a and b at once");
    CHECK(host_copy(out_a) == expected);
    CHECK(host_copy(out_b) == expected);
}
