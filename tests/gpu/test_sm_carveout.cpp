// [gpu] The graph-API shortlist's environment knobs (graph_conv.cpp), and the names its entries
// go by. SM carveout (IOSTUNE_SM_CARVEOUT): a convolution's shortlist gains configurations cuDNN
// carves to run on part of the GPU, after its usual ranks, and each computes what the first
// configuration computes; off (unset), there are none; on a GPU before Hopper the setting
// changes nothing. IOSTUNE_GRAPH_COMPILED caps the run-time compiled configurations of a fused
// convolution's shortlist. Every entry has a name of its own (ConvChoice::engine), which finds
// its rank again. A setting out of range is refused with the variable's name.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/engine/cuda_check.h"
#include "src/engine/cudnn_descriptors.h"
#include "src/engine/cudnn_handle.h"
#include "src/engine/device_buffer.h"
#include "src/engine/graph_conv.h"
#include "src/error.h"
#include "src/weights.h"

using namespace iostune;

namespace {

// A 3x3 convolution on 35x35x64 at batch 1 (TF32, channels-last), of the shapes Inception V3's
// branches have: cuDNN offered carved configurations for those (call183).
constexpr int kIn = 64, kOut = 96, kSide = 35;

// An environment variable set (or, with no value, unset) for a scope, unset after it.
struct EnvVariable {
    EnvVariable(const char* name, const char* value) : name_(name) {
        if (value != nullptr) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~EnvVariable() { unsetenv(name_); }
    const char* name_;
};

// Seeded values in [-1, 1) (src/weights.h's random_input).
std::vector<float> random_floats(int n, uint64_t seed) {
    return random_input(Shape{1, n, 1, 1}, seed).data;
}

DeviceBuffer upload(const std::vector<float>& host) {
    DeviceBuffer b(host.size() * sizeof(float));
    IOSTUNE_CUDA_CHECK(cudaMemcpy(b.get(), host.data(), b.bytes(), cudaMemcpyHostToDevice),
                       "test upload");
    return b;
}

struct Operands {
    DeviceBuffer x = upload(random_floats(kIn * kSide * kSide, 1));
    DeviceBuffer w = upload(random_floats(kOut * kIn * 9, 2));
    DeviceBuffer y = DeviceBuffer(size_t(kOut) * kSide * kSide * sizeof(float));
    TensorView in() const {
        return packed_view(x.get(), DType::F32, TensorLayout::Nhwc, 1, kIn, kSide, kSide);
    }
    TensorView out() const {
        return packed_view(y.get(), DType::F32, TensorLayout::Nhwc, 1, kOut, kSide, kSide);
    }
};

GraphConv graph_conv(const Operands& o, const GraphEpilogue& epilogue = {}) {
    return GraphConv(o.in(), o.out(), o.w.get(), 3, 3, ConvGeometry{1, 1, 1, 1, 1, 1, 1},
                     epilogue, Precision::Tf32, size_t(256) << 20, "carveout test");
}

// Each entry's name is its own and finds its rank; selected, it is what plans show.
void check_names(GraphConv& conv) {
    for (int rank = 0; rank < conv.candidates(); ++rank) {
        INFO("rank " << rank << ": " << conv.identity(rank));
        CHECK_FALSE(conv.identity(rank).empty());
        CHECK(conv.rank_of(conv.identity(rank)) == rank);
        REQUIRE(conv.select(rank));
        CHECK(conv.selected_name() == conv.identity(rank));
    }
    conv.select(0);
    CHECK(conv.rank_of("engine 99999") == -1);
    CHECK(conv.rank_of("") == -1);
}

std::vector<float> run_rank(GraphConv& conv, int rank, const Operands& o, cudnnHandle_t handle) {
    REQUIRE(conv.select(rank));
    const DeviceBuffer workspace(conv.workspace_bytes());
    IOSTUNE_CUDA_CHECK(cudaMemset(o.y.get(), 0, o.y.bytes()), "test");
    conv.run(handle, workspace.get());
    std::vector<float> host(o.y.bytes() / sizeof(float));
    IOSTUNE_CUDA_CHECK(cudaMemcpy(host.data(), o.y.get(), o.y.bytes(), cudaMemcpyDeviceToHost),
                       "test download");
    return host;
}

int carved_count(GraphConv& conv) {
    int carved = 0;
    for (int rank = 0; rank < conv.candidates(); ++rank) {
        conv.select(rank);
        carved += conv.sm_target() > 0;
    }
    conv.select(0);
    return carved;
}

}  // namespace

TEST_CASE("configurations carved to part of the GPU come after the usual ranks and compute "
          "the same",
          "[gpu][carveout]") {
    int major = 0, sms = 0;
    IOSTUNE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "t");
    IOSTUNE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "t");
    const Operands o;
    const CudnnHandle handle;

    int usual = 0;
    {
        const EnvVariable off("IOSTUNE_SM_CARVEOUT", nullptr);
        GraphConv conv = graph_conv(o);
        usual = conv.candidates();
        CHECK(carved_count(conv) == 0);
        check_names(conv);
    }
    {
        const EnvVariable bad("IOSTUNE_SM_CARVEOUT", "half");
        CHECK_THROWS_WITH(graph_conv(o), Catch::Contains("IOSTUNE_SM_CARVEOUT=half"));
    }
    const EnvVariable half_the_sms("IOSTUNE_SM_CARVEOUT", "2");
    GraphConv conv = graph_conv(o);
    INFO(conv.notes());
    if (major < 9) {
        WARN("compute capability " << major << ": no SM carveout (it needs Hopper)");
        CHECK(carved_count(conv) == 0);
        return;
    }
    REQUIRE(conv.candidates() > usual);
    CHECK(carved_count(conv) == conv.candidates() - usual);
    check_names(conv);  // two carved configurations of one engine are told apart
    const std::vector<float> reference = run_rank(conv, 0, o, handle.get());
    for (int rank = usual; rank < conv.candidates(); ++rank) {
        REQUIRE(conv.select(rank));
        CHECK(conv.sm_target() == sms / 2);
        const std::vector<float> carved = run_rank(conv, rank, o, handle.get());
        double diff = 0, norm = 0;
        for (size_t i = 0; i < carved.size(); ++i) {
            diff += double(carved[i] - reference[i]) * (carved[i] - reference[i]);
            norm += double(reference[i]) * reference[i];
        }
        // TF32 products either way; only the order of the sums may differ.
        CHECK(std::sqrt(diff / norm) < 1e-3);
    }
    WARN(conv.candidates() - usual << " carved configurations on " << sms / 2 << " SMs");
}

TEST_CASE("IOSTUNE_GRAPH_COMPILED caps a fused shortlist's run-time compiled configurations",
          "[gpu][carveout]") {
    const Operands o;
    const DeviceBuffer bias = upload(random_floats(kOut, 3));
    // Bias and SiLU, as EfficientNet's convolutions fuse them: only cuDNN's runtime-fusion
    // engines (compiled at run time) run that graph (call181), so a cap of one leaves some out.
    const GraphEpilogue fused{bias.get(), std::nullopt, false,
                              ActivationAttrs{ActivationFunction::Silu}};
    int all = 0;
    {
        GraphConv conv = graph_conv(o, fused);
        all = conv.candidates();
        INFO(conv.notes());
        check_names(conv);
        CHECK(conv.notes().find("further run-time compiled") == std::string::npos);
    }
    {
        const EnvVariable one("IOSTUNE_GRAPH_COMPILED", "1");
        GraphConv conv = graph_conv(o, fused);
        INFO(conv.notes());
        check_names(conv);
        CHECK(conv.candidates() >= 1);
        CHECK(conv.candidates() < all);
        CHECK(conv.notes().find("at most 1 compiled") != std::string::npos);
        WARN(all << " configurations uncapped, " << conv.candidates() << " with one compiled");
    }
    for (const char* bad : {"0", "7", "two"}) {
        const EnvVariable setting("IOSTUNE_GRAPH_COMPILED", bad);
        CHECK_THROWS_WITH(graph_conv(o, fused), Catch::Contains("IOSTUNE_GRAPH_COMPILED="));
    }
}
