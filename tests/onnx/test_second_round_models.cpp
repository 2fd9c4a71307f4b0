// Issue 28's patterns as PyTorch exports them (tests/fixtures/export_torchvision.py: PReLU nets,
// GroupNorm and InstanceNorm, ResNeSt's and SKNet's split attention, a head concatenating
// flattened vectors, YOLO's Focus stem, PixelShuffle / PixelUnshuffle and ONNX's DepthToSpace /
// SpaceToDepth nodes, an ESPCN super-resolution net), imported and run on the CPU reference
// against PyTorch's outputs: the L2 relative error of every output is at most 1e-4, in process
// (the fused graph, as every command runs it) and through `iostune run --backend cpu`. Each model
// also shows the ops its pattern became.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "src/error.h"
#include "src/fusion.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;
namespace fs = std::filesystem;

constexpr double kBound = 1e-4;

double l2_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
    double diff = 0.0, norm = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double d = double(got[i]) - double(want[i]);
        diff += d * d;
        norm += double(want[i]) * double(want[i]);
    }
    return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// PyTorch's outputs of fixture `entry`, one after another.
std::vector<float> expected_outputs(const nlohmann::json& entry) {
    std::vector<float> all;
    for (const auto& file : entry["outputs"]) {
        const std::vector<float> part = read_floats(fixture_path(file.get<std::string>()));
        all.insert(all.end(), part.begin(), part.end());
    }
    return all;
}

#ifdef IOSTUNE_EXE
// `iostune run --backend cpu` on PyTorch's input: its output file.
std::vector<float> run_cli(const nlohmann::json& entry) {
    const fs::path dir = fs::path(IOSTUNE_BINARY_DIR) / "tests" / "onnx_second_round";
    fs::create_directories(dir);
    const std::string name = entry["name"].get<std::string>();
    const std::string out = (dir / (name + ".out.bin")).string();
    const std::string cmd = fmt::format(
        "'{}' run --model '{}' --batch {} --backend cpu --input '{}' --output '{}' 2>&1",
        IOSTUNE_EXE, fixture_path(entry["onnx"]), entry["batch"].get<int>(),
        fixture_path(entry["input"]), out);
    FILE* pipe = popen(cmd.c_str(), "r");
    REQUIRE(pipe);
    std::string text;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
    INFO(text);
    REQUIRE(pclose(pipe) == 0);
    return read_floats(out);
}
#endif

// Imports fixture `name`, checks the fused graph on the CPU reference and `iostune run --backend
// cpu` against PyTorch, and returns the import (empty when the fixtures were skipped).
Graph check_against_pytorch(const std::string& name) {
    const auto manifest = load_manifest();
    if (!manifest) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return {};
    }
    const auto entry = manifest_entry(*manifest, name);
    REQUIRE(entry);
    const auto [graph, input] = import_fixture(*entry);
    const FusedGraph fused = fuse_epilogues(graph);
    std::vector<float> got;
    for (const HostTensor& out : reference_run_outputs(fused.graph, {input}))
        got.insert(got.end(), out.data.begin(), out.data.end());
    const std::vector<float> want = expected_outputs(*entry);
    REQUIRE(got.size() == want.size());
    const double error = l2_relative_error(got, want);
    INFO(fmt::format("{}: {} ops ({} fused), L2 relative error {:.3g}", name, graph.size(),
                     fused.counts.total(), error));
    CHECK(error <= kBound);
#ifdef IOSTUNE_EXE
    const std::vector<float> cli = run_cli(*entry);
    REQUIRE(cli.size() == want.size());
    const double cli_error = l2_relative_error(cli, want);
    INFO(fmt::format("iostune run --backend cpu: L2 relative error {:.3g}", cli_error));
    CHECK(cli_error <= kBound);
#endif
    return graph;
}

int count(const Graph& graph, OpKind kind) {
    int n = 0;
    for (const Op& op : graph.ops()) n += op.kind == kind;
    return n;
}

std::set<OpKind> kinds(const Graph& graph) {
    std::set<OpKind> out;
    for (const Op& op : graph.ops()) out.insert(op.kind);
    return out;
}

}  // namespace

TEST_CASE("PReLU per channel (after a conv, a depthwise conv, a residual add, on a vector) and "
          "shared (a leaky ReLU) matches PyTorch; a conv fuses the PReLU after it",
          "[onnx][pytorch][second_round]") {
    const Graph g = check_against_pytorch("prelu_net");
    if (g.size() == 0) return;
    CHECK(count(g, OpKind::PRelu) == 4);
    bool leaky = false;
    for (const Op& op : g.ops())
        leaky = leaky || (op.kind == OpKind::Activation &&
                          op.as<ActivationAttrs>().function == ActivationFunction::LeakyRelu);
    CHECK(leaky);
    // conv1 (its batch norm folded), the depthwise conv and the residual conv take their PReLU.
    CHECK(fuse_epilogues(g).counts.conv_prelu == 3);
}

TEST_CASE("GroupNorm (Reshape + InstanceNormalization + Reshape + affine) is one group_norm op; "
          "InstanceNorm2d too; both match PyTorch",
          "[onnx][pytorch][second_round]") {
    for (const char* name : {"group_norms", "group_norms_opset17"}) {
        const Graph g = check_against_pytorch(name);
        if (g.size() == 0) continue;
        // Four GroupNorms and two InstanceNorm2d, nothing else but the convolutions and ReLUs:
        // the reshapes are views and the affine parts fold into the norms.
        CHECK(count(g, OpKind::GroupNorm) == 6);
        CHECK(kinds(g) == std::set<OpKind>{OpKind::Conv, OpKind::GroupNorm, OpKind::Relu});
        std::vector<int> groups;
        for (const Op& op : g.ops())
            if (op.kind == OpKind::GroupNorm) groups.push_back(op.as<GroupNormAttrs>().groups);
        CHECK(groups == std::vector<int>{4, 3, 9, 7, 1, 7});
    }
    const Graph rebatched = import_onnx_file(fixture_path("group_norms_opset17.onnx"));
    CHECK(rebatched.with_batch(5).output_shape().n == 5);
}

TEST_CASE("ResNeSt's split attention (radix 2, radix 4 with 2 cardinal groups, radix 1) matches "
          "PyTorch at opsets 13 and 11",
          "[onnx][pytorch][second_round]") {
    for (const char* name : {"split_attention", "split_attention_opset11"}) {
        const Graph g = check_against_pytorch(name);
        if (g.size() == 0) continue;
        std::vector<RadixSoftmaxAttrs> softmaxes;
        for (const Op& op : g.ops())
            if (op.kind == OpKind::RadixSoftmax) softmaxes.push_back(op.as<RadixSoftmaxAttrs>());
        CHECK(softmaxes == std::vector<RadixSoftmaxAttrs>{{2, 1}, {4, 2}});
        // The branch sums: adds of channel slices; the weighting: broadcast multiplies.
        CHECK(count(g, OpKind::ChannelSlice) == 2 * (2 + 4));
        CHECK(count(g, OpKind::Binary) == 3);
    }
}

TEST_CASE("SKNet's selective kernels (torch.stack, softmax over the paths, weighted sum) match "
          "PyTorch at opsets 13 and 11",
          "[onnx][pytorch][second_round]") {
    for (const char* name : {"selective_kernel", "selective_kernel_opset11"}) {
        const Graph g = check_against_pytorch(name);
        if (g.size() == 0) continue;
        std::vector<RadixSoftmaxAttrs> softmaxes;
        for (const Op& op : g.ops())
            if (op.kind == OpKind::RadixSoftmax) softmaxes.push_back(op.as<RadixSoftmaxAttrs>());
        CHECK(softmaxes == std::vector<RadixSoftmaxAttrs>{{2, 1}, {3, 1}});
    }
}

TEST_CASE("a head concatenating flattened vectors (flatten, squeeze, view; one of a 2x2 map) "
          "matches PyTorch",
          "[onnx][pytorch][second_round]") {
    const Graph g = check_against_pytorch("flat_concat_head");
    if (g.size() == 0) return;
    CHECK(count(g, OpKind::Flatten) == 1);  // only the 2x2 map moves; pooled vectors are views
    CHECK(count(g, OpKind::Concat) == 1);
}

TEST_CASE("YOLO's Focus stem and a slice with steps on C, H and W at once match PyTorch",
          "[onnx][pytorch][second_round]") {
    const Graph g = check_against_pytorch("focus_stem");
    if (g.size() == 0) return;
    // x[..., ::2, ::2] is a Slice of H then one of W: each pair composes into one op.
    CHECK(count(g, OpKind::StridedSlice) == 5);
    for (const Op& op : g.ops())
        if (op.kind == OpKind::StridedSlice) CHECK(op.as<StridedSliceAttrs>().w_step == 2);
}

TEST_CASE("PixelShuffle, PixelUnshuffle (6-D views), DCR shuffles written with view/permute and "
          "ONNX's DepthToSpace/SpaceToDepth nodes match PyTorch",
          "[onnx][pytorch][second_round]") {
    const Graph g = check_against_pytorch("pixel_shuffles");
    if (g.size() > 0) {
        std::vector<std::pair<OpKind, DepthSpaceAttrs>> ops;
        for (const Op& op : g.ops())
            if (op.kind == OpKind::DepthToSpace || op.kind == OpKind::SpaceToDepth)
                ops.emplace_back(op.kind, op.as<DepthSpaceAttrs>());
        const std::vector<std::pair<OpKind, DepthSpaceAttrs>> expected = {
            {OpKind::SpaceToDepth, {2, BlockOrder::Crd}},
            {OpKind::DepthToSpace, {3, BlockOrder::Crd}},
            {OpKind::DepthToSpace, {2, BlockOrder::Dcr}},
            {OpKind::SpaceToDepth, {2, BlockOrder::Dcr}}};
        CHECK(ops == expected);
    }
    const Graph nodes = check_against_pytorch("depth_space_nodes");
    if (nodes.size() > 0) CHECK(count(nodes, OpKind::DepthToSpace) == 1);
    const Graph espcn = check_against_pytorch("espcn");
    if (espcn.size() > 0) {
        CHECK(count(espcn, OpKind::PRelu) == 2);
        CHECK(fuse_epilogues(espcn).counts.conv_prelu == 2);
    }
}
