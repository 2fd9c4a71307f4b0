// ONNX files from strangers: exports of MobileNetV3, ShuffleNetV2 and the U-Net (every new
// importer path: folding, channel shuffle, split, SE gates, ConvTranspose, Resize) mutated in
// seeded ways (an attribute, an input, an op type, an initializer's shape or values, a node
// removed). Each import gives a model or one iostune::Error: never another exception or a crash.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <random>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/onnx/onnx_import.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;

std::string read_bytes(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// One seeded mutation of `model`; returns what it did, for the failure message.
std::string mutate(onnx::ModelProto& model, std::mt19937& rng) {
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    auto& graph = *model.mutable_graph();
    auto& node = *graph.mutable_node(pick(graph.node_size()));
    const std::vector<int64_t> odd_ints = {-1, 0, 1, 2, 3, 7, -9, 1LL << 40, -(1LL << 40)};
    const std::vector<std::string> op_types = {"Conv", "Reshape", "Transpose", "Split", "Slice",
                                               "Resize", "Mul", "Gather", "Concat", "Erf",
                                               "LayerNormalization", "ConvTranspose", "Range",
                                               "ConstantOfShape", "Shape", "Expand", "Clip"};
    switch (pick(6)) {
        case 0: {
            if (node.attribute_size() == 0) return "nothing (a node without attributes)";
            auto& a = *node.mutable_attribute(pick(node.attribute_size()));
            const int64_t v = odd_ints[size_t(pick(int(odd_ints.size())))];
            if (a.ints_size() > 0) a.set_ints(pick(a.ints_size()), v);
            else a.set_i(v);
            return fmt::format("node '{}' attribute '{}' := {}", node.name(), a.name(), v);
        }
        case 1: {
            if (node.input_size() == 0) return "nothing (a node without inputs)";
            const auto& other = graph.node(pick(graph.node_size()));
            const std::string name = other.output_size() > 0 ? other.output(0) : "bogus";
            node.set_input(pick(node.input_size()), name);
            return fmt::format("node '{}' reads '{}'", node.name(), name);
        }
        case 2: {
            const std::string type = op_types[size_t(pick(int(op_types.size())))];
            node.set_op_type(type);
            return fmt::format("node '{}' becomes a {}", node.name(), type);
        }
        case 3: {
            auto& t = *graph.mutable_initializer(pick(graph.initializer_size()));
            if (t.dims_size() == 0) return "nothing (a scalar initializer)";
            const int d = pick(t.dims_size());
            t.set_dims(d, t.dims(d) + (pick(2) ? 1 : -1));
            return fmt::format("initializer '{}' dim {} changed", t.name(), d);
        }
        case 4: {
            // Integer constants are the shapes the folding and reshapes read.
            for (int tries = 0; tries < 20; ++tries) {
                auto& t = *graph.mutable_initializer(pick(graph.initializer_size()));
                if (t.data_type() != onnx::TensorProto::INT64 || !t.has_raw_data() ||
                    t.raw_data().size() < 8)
                    continue;
                std::string raw = t.raw_data();
                const int64_t v = odd_ints[size_t(pick(int(odd_ints.size())))];
                std::memcpy(raw.data() + 8 * size_t(pick(int(raw.size() / 8))), &v, 8);
                t.set_raw_data(raw);
                return fmt::format("int initializer '{}' holds {}", t.name(), v);
            }
            return "nothing (no int initializer found)";
        }
        default: {
            const int index = pick(graph.node_size());
            const std::string name = graph.node(index).name();
            graph.mutable_node()->DeleteSubrange(index, 1);
            return fmt::format("node '{}' removed", name);
        }
    }
}

}  // namespace

TEST_CASE("mutated ONNX exports: one clear error or a model, never a crash", "[onnx][fuzz]") {
    if (!load_manifest()) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return;
    }
    std::mt19937 rng(20261124);
    for (const char* name : {"mobilenet_v3_small", "shufflenet_v2_x0_5", "unet"}) {
        onnx::ModelProto original;
        REQUIRE(original.ParseFromString(read_bytes(fixture_path(std::string(name) + ".onnx"))));
        int errors = 0, models = 0;
        for (int i = 0; i < 200; ++i) {
            onnx::ModelProto model = original;
            std::string what = mutate(model, rng);
            if (i % 3 == 0) what += "; " + mutate(model, rng);
            INFO(fmt::format("{} mutation {}: {}", name, i, what));
            try {
                const Graph g = import_onnx_bytes(model.SerializeAsString(), "mutated.onnx");
                CHECK(g.size() > 0);
                ++models;
            } catch (const Error& e) {
                CHECK_THAT(e.what(), Catch::Contains("mutated.onnx"));
                ++errors;
            } catch (const std::exception& e) {
                FAIL_CHECK("not an iostune::Error: " << e.what());
            }
        }
        WARN(fmt::format("{}: {} mutations imported, {} refused with an iostune::Error", name,
                         models, errors));
    }
}
