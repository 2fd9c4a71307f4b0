// iostune's CPU reference on imported torchvision / PyTorch exports against PyTorch's own
// output for the same seeded input (tests/fixtures/export_torchvision.py): the independent
// oracle for the importer, BN folding and every CPU kernel. Bound: 1e-4 relative.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "src/error.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;

constexpr double kBound = 1e-4;

// Imports fixture `name`, runs the CPU reference on PyTorch's input and returns the relative
// error against PyTorch's output (or -1 when the fixtures were skipped).
double error_against_pytorch(const std::string& name) {
    const auto manifest = load_manifest();
    if (!manifest) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return -1.0;
    }
    const auto entry = manifest_entry(*manifest, name);
    REQUIRE(entry);
    const auto [graph, input] = import_fixture(*entry);
    const HostTensor output = reference_run(graph, input);
    const std::vector<float> expected = read_floats(fixture_path((*entry)["output"]));
    REQUIRE(output.data.size() == expected.size());
    const double error = relative_error(output.data, expected);
    INFO(fmt::format("{}: {} ops, output {}x{}x{}x{}, relative error {:.3g}", name, graph.size(),
                     output.shape.n, output.shape.c, output.shape.h, output.shape.w, error));
    CHECK(error <= kBound);
    return error;
}

}  // namespace

TEST_CASE("inception_v3 (opset 11 with batch norm kept) matches PyTorch", "[onnx][pytorch]") {
    error_against_pytorch("inception_v3");
}

TEST_CASE("googlenet (opset 14 default export) matches PyTorch", "[onnx][pytorch]") {
    error_against_pytorch("googlenet");
}

TEST_CASE("squeezenet1_1 (opset 13) matches PyTorch", "[onnx][pytorch]") {
    error_against_pytorch("squeezenet1_1");
}

TEST_CASE(
    "resnet50 (opset 17 with batch norm kept and a symbolic batch bound to 2) "
    "matches PyTorch",
    "[onnx][pytorch]") {
    error_against_pytorch("resnet50");
}

TEST_CASE("every supported op at opset 11 and at opset 17 with a symbolic batch matches PyTorch",
          "[onnx][pytorch]") {
    error_against_pytorch("branchy_opset11");
    error_against_pytorch("branchy_opset17");
}

TEST_CASE("asymmetric padding that yields the same windows is accepted and exact",
          "[onnx][pytorch]") {
    error_against_pytorch("pad_conv_fits");
}

TEST_CASE("asymmetric padding that adds a window becomes a spatial_pad op and is exact",
          "[onnx][pytorch][spatial_pad]") {
    error_against_pytorch("pad_conv_asymmetric");
}

TEST_CASE("timm's 'same' padding at even sizes (longer at the end) before a strided conv, a -inf "
          "max pool, a zero average pool and a max pool after a zero F.pad matches PyTorch",
          "[onnx][pytorch][folding][spatial_pad]") {
    error_against_pytorch("same_padding_even");
}

TEST_CASE("F.pad with negative and asymmetric sides (alone, under a padded conv, before an "
          "unpadded conv) matches PyTorch",
          "[onnx][pytorch][spatial_pad]") {
    error_against_pytorch("crop_pad");
}

TEST_CASE("slices of H and W (after a zero pad, before a conv, with channels) match PyTorch",
          "[onnx][pytorch][spatial_pad]") {
    error_against_pytorch("spatial_slice");
}

TEST_CASE("nasnet's path_1 / path_2 (ZeroPad2d((-1, 1, -1, 1)), 1x1 stride-2 average pool) at "
          "odd and even sizes matches PyTorch",
          "[onnx][pytorch][spatial_pad]") {
    error_against_pytorch("nasnet_paths_odd");
    error_against_pytorch("nasnet_paths_even");
}

TEST_CASE("timm-style 'same' padding (torch.clamp over traced sizes) folds and matches PyTorch",
          "[onnx][pytorch][folding]") {
    error_against_pytorch("same_padding_opset11");
    error_against_pytorch("same_padding_opset17");
}

TEST_CASE("pads from integer arithmetic on a traced size (//, %, torch.div, clamp) fold and match "
          "PyTorch",
          "[onnx][pytorch][folding]") {
    error_against_pytorch("integer_pad_opset13");
}

TEST_CASE("the models PyTorch exports that iostune must refuse give one clear error each",
          "[onnx][pytorch]") {
    const auto manifest = load_manifest();
    if (!manifest) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return;
    }
    int refused = 0;
    for (const auto& entry : (*manifest)["models"]) {
        if (!entry.contains("expect_error")) continue;
        ++refused;
        const std::string path = fixture_path(entry["onnx"]);
        INFO(entry["name"].get<std::string>());
        try {
            import_onnx_file(path);
            FAIL("imported without an error");
        } catch (const Error& e) {
            const std::string message = e.what();
            INFO(message);
            CHECK(message.find(path) != std::string::npos);
            for (const auto& part : entry["expect_error"])
                CHECK(message.find(part.get<std::string>()) != std::string::npos);
        }
    }
    CHECK(refused == 3);
}
