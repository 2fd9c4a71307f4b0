// The CNN families people deploy, exported by PyTorch (tests/fixtures/export_torchvision.py:
// seeded weights, perturbed batch-norm statistics, small images), imported and run on the CPU
// reference against PyTorch's outputs: the L2 relative error of every output is at most 1e-4.
// The graph run is the fused one (src/fusion.h), as every command runs it.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "src/error.h"
#include "src/fusion.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;

constexpr double kBound = 1e-4;

// ||got - want|| / ||want||.
double l2_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
    double diff = 0.0, norm = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double d = double(got[i]) - double(want[i]);
        diff += d * d;
        norm += double(want[i]) * double(want[i]);
    }
    return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// Imports fixture `name` with the manifest's batch, fuses it, runs the CPU reference on PyTorch's
// input and checks every output against PyTorch's. Returns the imported graph (empty when
// fixtures were skipped).
Graph check_against_pytorch(const std::string& name) {
    const auto manifest = load_manifest();
    if (!manifest) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return {};
    }
    const auto entry = manifest_entry(*manifest, name);
    REQUIRE(entry);
    const auto [graph, input] = import_fixture(*entry);
    const auto files = (*entry)["outputs"].get<std::vector<std::string>>();
    REQUIRE(graph.output_count() == int(files.size()));
    const FusedGraph fused = fuse_epilogues(graph);
    const std::vector<HostTensor> outputs = reference_run_outputs(fused.graph, {input});
    for (size_t k = 0; k < files.size(); ++k) {
        const std::vector<float> expected = read_floats(fixture_path(files[k]));
        REQUIRE(outputs[k].data.size() == expected.size());
        const double error = l2_relative_error(outputs[k].data, expected);
        INFO(fmt::format("{} output {}: {} ops ({} fused), {}x{}x{}x{}, L2 relative error {:.3g}",
                         name, k, graph.size(), fused.counts.total(), outputs[k].shape.n,
                         outputs[k].shape.c, outputs[k].shape.h, outputs[k].shape.w, error));
        CHECK(error <= kBound);
    }
    return graph;
}

bool has_kind(const Graph& graph, OpKind kind) {
    for (const Op& op : graph.ops())
        if (op.kind == kind) return true;
    return false;
}

bool has_activation(const Graph& graph, ActivationFunction f) {
    for (const Op& op : graph.ops())
        if (op.kind == OpKind::Activation && op.as<ActivationAttrs>().function == f) return true;
    return false;
}

// Whether the fusion pass gives some convolution the activation function `f`.
bool fuses_activation(const Graph& graph, ActivationFunction f) {
    const Graph fused = fuse_epilogues(graph).graph;
    for (const Op& op : fused.ops())
        if (op.kind == OpKind::Conv && op.as<ConvAttrs>().activation &&
            op.as<ConvAttrs>().activation->function == f)
            return true;
    return false;
}

}  // namespace

TEST_CASE("AlexNet, VGG, ResNeXt, Wide ResNet and DenseNet match PyTorch",
          "[onnx][pytorch][deployed]") {
    for (const char* name :
         {"alexnet", "vgg11_bn", "resnext50_32x4d", "wide_resnet50_2", "densenet121"})
        check_against_pytorch(name);
    // DenseNet's batch norms follow concats: they cannot fold and stay per-channel affine maps.
    const Graph densenet = check_against_pytorch("densenet121");
    if (densenet.size() > 0) CHECK(has_kind(densenet, OpKind::ChannelAffine));
}

TEST_CASE("MobileNetV2 and V3 (ReLU6, HardSwish, HardSigmoid SE) match PyTorch",
          "[onnx][pytorch][deployed]") {
    const Graph v2 = check_against_pytorch("mobilenet_v2");
    if (v2.size() > 0) {
        CHECK(has_activation(v2, ActivationFunction::Clip));
        CHECK(fuses_activation(v2, ActivationFunction::Clip));
    }
    // Opset 17 has a HardSwish op; opset 13's export decomposes it (HardSigmoid and Mul).
    for (const char* name : {"mobilenet_v3_small", "mobilenet_v3_large"}) {
        const Graph v3 = check_against_pytorch(name);
        if (v3.size() == 0) continue;
        CHECK(has_activation(v3, ActivationFunction::HardSwish));
        CHECK(has_activation(v3, ActivationFunction::HardSigmoid));
        CHECK(fuses_activation(v3, ActivationFunction::HardSwish));
        CHECK(has_kind(v3, OpKind::Binary));
    }
}

TEST_CASE("EfficientNet B0 to B3 and V2-S (SiLU, squeeze-excitation) match PyTorch",
          "[onnx][pytorch][deployed]") {
    for (const char* name : {"efficientnet_b0", "efficientnet_b1", "efficientnet_b2",
                             "efficientnet_b3", "efficientnet_v2_s"}) {
        const Graph g = check_against_pytorch(name);
        if (g.size() == 0) continue;
        CHECK(has_activation(g, ActivationFunction::Silu));
        CHECK(fuses_activation(g, ActivationFunction::Silu));
    }
}

TEST_CASE("ShuffleNetV2 (split, channel shuffle) and MNASNet match PyTorch",
          "[onnx][pytorch][deployed]") {
    for (const char* name : {"shufflenet_v2_x1_0", "shufflenet_v2_x0_5"}) {
        const Graph g = check_against_pytorch(name);
        if (g.size() == 0) continue;
        CHECK(has_kind(g, OpKind::ChannelShuffle));
        CHECK(has_kind(g, OpKind::ChannelSlice));
    }
    check_against_pytorch("mnasnet1_0");
}

TEST_CASE("RegNet X and Y match PyTorch", "[onnx][pytorch][deployed]") {
    check_against_pytorch("regnet_x_400mf");
    check_against_pytorch("regnet_y_400mf");
}

TEST_CASE("ConvNeXt-T (channels-last LayerNorm, GELU, layer scale) matches PyTorch",
          "[onnx][pytorch][deployed]") {
    const Graph g = check_against_pytorch("convnext_tiny");
    if (g.size() == 0) return;
    CHECK(has_kind(g, OpKind::ChannelNorm));
    CHECK(has_activation(g, ActivationFunction::Gelu));
    // A symbolic batch: the same import runs at another batch.
    CHECK(g.with_batch(3).output_shape().n == 3);
}

TEST_CASE("Faster R-CNN's ResNet-50 FPN backbone (five outputs) matches PyTorch",
          "[onnx][pytorch][deployed]") {
    const Graph g = check_against_pytorch("fasterrcnn_fpn_backbone");
    if (g.size() == 0) return;
    CHECK(g.output_count() == 5);
    CHECK(has_kind(g, OpKind::Resize));
}

TEST_CASE("a U-Net (ConvTranspose, bilinear Resize, skip concats) matches PyTorch",
          "[onnx][pytorch][deployed]") {
    const Graph g = check_against_pytorch("unet");
    if (g.size() == 0) return;
    CHECK(has_kind(g, OpKind::ConvTranspose));
    CHECK(has_kind(g, OpKind::Resize));
}
