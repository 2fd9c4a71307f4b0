// The CNN zoo against torchvision: output and intermediate shapes, folded parameter counts and
// multiply-accumulates. Expected figures were computed with Debian's torchvision 0.14 (eval mode,
// no aux classifiers): folded params = torchvision params - BN channels (gamma and beta become one
// bias per channel), MACs = conv + linear multiply-accumulates at batch 1.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "src/graph.h"
#include "src/operator_info.h"
#include "src/zoo/zoo.h"

using namespace iostune;

namespace {

const Op& op_named(const Graph& g, const std::string& name) {
    const auto& ops = g.ops();
    const auto it = std::find_if(ops.begin(), ops.end(),
                                 [&](const Op& op) { return op.name == name; });
    INFO("op " << name << " in " << g.name());
    REQUIRE(it != ops.end());
    return *it;
}

Shape shape_of(const Graph& g, const std::string& name) { return op_named(g, name).output; }

int64_t conv_linear_macs(const Graph& g) {
    int64_t macs = 0;
    for (const Op& op : g.ops()) {
        const Shape& in = g.tensor_shape(op.inputs.at(0));
        if (op.kind == OpKind::Conv) {
            const auto& a = op.as<ConvAttrs>();
            macs += op.output.elements() * (in.c / a.groups) * a.kernel_h * a.kernel_w;
        } else if (op.kind == OpKind::Linear) {
            macs += int64_t(op.output.n) * op.output.c * in.c * in.h * in.w;
        }
    }
    return macs;
}

struct Expected {
    const char* name;
    int image;
    int64_t folded_params;
    int64_t macs;           // torchvision's conv + linear MACs, exact
    double published_gmacs; // torchvision docs' "GFLOPS" column
};

const Expected kModels[] = {
    {"inception_v3", 299, 23834568 - 17216, 5713216096, 5.71},
    {"googlenet", 224, 6624904 - 7280, 1498376192, 1.50},
    {"squeezenet1_1", 224, 1235496, 349151936, 0.35},
    {"resnet50", 224, 25557032 - 26560, 4089184256, 4.09},
};

}  // namespace

TEST_CASE("zoo CNNs end in N x 1000 x 1 x 1 logits at any batch", "[zoo]") {
    for (const Expected& m : kModels) {
        INFO(m.name);
        const Graph g = build_zoo_model(m.name, 1);
        CHECK(g.name() == m.name);
        CHECK(g.input_shape() == Shape{1, 3, m.image, m.image});
        CHECK(g.output_shape() == Shape{1, 1000, 1, 1});
        CHECK(g.op(g.output_id()).kind != OpKind::Softmax);

        const Graph g4 = g.with_batch(4);
        CHECK(g4.output_shape() == Shape{4, 1000, 1, 1});
        CHECK(build_zoo_model(m.name, 4).output_shape() == Shape{4, 1000, 1, 1});
    }
}

TEST_CASE("zoo CNNs have torchvision's folded parameter counts", "[zoo]") {
    for (const Expected& m : kModels) {
        INFO(m.name);
        CHECK(totals(build_zoo_model(m.name)).params == m.folded_params);
    }
}

TEST_CASE("zoo CNNs have torchvision's multiply-accumulates", "[zoo]") {
    for (const Expected& m : kModels) {
        INFO(m.name);
        const Graph g = build_zoo_model(m.name);
        CHECK(conv_linear_macs(g) == m.macs);
        // flops() counts 2 per MAC plus bias, ReLU, pool and add work: within 2% of published.
        const double gmacs = double(totals(g).flops) / 2.0 / 1e9;
        CHECK(gmacs == Approx(m.published_gmacs).epsilon(0.02));
        // MACs scale with the batch.
        CHECK(conv_linear_macs(g.with_batch(4)) == 4 * m.macs);
    }
}

TEST_CASE("zoo op names are unique torchvision module paths", "[zoo]") {
    for (const Expected& m : kModels) {
        INFO(m.name);
        const Graph g = build_zoo_model(m.name);
        std::set<std::string> names;
        for (const Op& op : g.ops()) CHECK(names.insert(op.name).second);
    }
    const Graph inception = build_zoo_model("inception_v3");
    CHECK(op_named(inception, "Mixed_5b.branch1x1").kind == OpKind::Conv);
    CHECK(op_named(build_zoo_model("resnet50"), "layer1.0.conv1").kind == OpKind::Conv);
    CHECK(op_named(build_zoo_model("googlenet"), "inception4a.branch4.0").kind == OpKind::MaxPool);
    CHECK(op_named(build_zoo_model("squeezenet1_1"), "features.12.expand3x3").kind == OpKind::Conv);
}

TEST_CASE("inception_v3 intermediate shapes equal torchvision's", "[zoo]") {
    const Graph g = build_inception_v3(1);
    CHECK(shape_of(g, "Conv2d_1a_3x3") == Shape{1, 32, 149, 149});
    CHECK(shape_of(g, "maxpool1") == Shape{1, 64, 73, 73});
    CHECK(shape_of(g, "maxpool2") == Shape{1, 192, 35, 35});
    CHECK(shape_of(g, "Mixed_5b.cat") == Shape{1, 256, 35, 35});
    CHECK(shape_of(g, "Mixed_5d.cat") == Shape{1, 288, 35, 35});
    CHECK(shape_of(g, "Mixed_6a.cat") == Shape{1, 768, 17, 17});
    CHECK(shape_of(g, "Mixed_6e.branch7x7dbl_5") == Shape{1, 192, 17, 17});
    CHECK(shape_of(g, "Mixed_7a.cat") == Shape{1, 1280, 8, 8});
    CHECK(shape_of(g, "Mixed_7c.cat") == Shape{1, 2048, 8, 8});
    CHECK(shape_of(g, "avgpool") == Shape{1, 2048, 1, 1});
    // Inception-E's nested concats are one six-input Concat.
    CHECK(op_named(g, "Mixed_7b.cat").inputs.size() == 6);
    CHECK(op_named(g, "Mixed_7c.cat").inputs.size() == 6);
}

TEST_CASE("googlenet intermediate shapes equal torchvision's (ceil-mode pools)", "[zoo]") {
    const Graph g = build_googlenet(1);
    CHECK(shape_of(g, "maxpool1") == Shape{1, 64, 56, 56});
    CHECK(shape_of(g, "maxpool2") == Shape{1, 192, 28, 28});
    CHECK(shape_of(g, "inception3b.cat") == Shape{1, 480, 28, 28});
    CHECK(shape_of(g, "maxpool3") == Shape{1, 480, 14, 14});
    CHECK(shape_of(g, "inception4e.cat") == Shape{1, 832, 14, 14});
    CHECK(shape_of(g, "maxpool4") == Shape{1, 832, 7, 7});
    CHECK(shape_of(g, "inception5b.cat") == Shape{1, 1024, 7, 7});
    // torchvision's "5x5" branch is a 3x3 conv.
    CHECK(op_named(g, "inception3a.branch3.1").as<ConvAttrs>().kernel_h == 3);
}

TEST_CASE("resnet50 intermediate shapes and residual structure", "[zoo]") {
    const Graph g = build_resnet50(1);
    CHECK(shape_of(g, "maxpool") == Shape{1, 64, 56, 56});
    CHECK(shape_of(g, "layer1.2.add") == Shape{1, 256, 56, 56});
    CHECK(shape_of(g, "layer2.3.add") == Shape{1, 512, 28, 28});
    CHECK(shape_of(g, "layer3.5.add") == Shape{1, 1024, 14, 14});
    CHECK(shape_of(g, "layer4.2.add") == Shape{1, 2048, 7, 7});
    // v1.5: the stride sits on the 3x3 conv.
    CHECK(op_named(g, "layer2.0.conv1").as<ConvAttrs>().stride_h == 1);
    CHECK(op_named(g, "layer2.0.conv2").as<ConvAttrs>().stride_h == 2);
    int adds = 0, downsamples = 0;
    for (const Op& op : g.ops()) {
        if (op.kind == OpKind::Add) {
            ++adds;
            CHECK(op.as<AddAttrs>().relu);
            CHECK(op.inputs.size() == 2);
        }
        if (op.name.find("downsample") != std::string::npos) {
            ++downsamples;
            CHECK_FALSE(op.as<ConvAttrs>().relu);
        }
    }
    CHECK(adds == 16);
    CHECK(downsamples == 4);
    CHECK_FALSE(op_named(g, "layer3.4.conv3").as<ConvAttrs>().relu);
}

TEST_CASE("squeezenet1_1 intermediate shapes and Fire modules", "[zoo]") {
    const Graph g = build_squeezenet1_1(1);
    CHECK(shape_of(g, "features.0") == Shape{1, 64, 111, 111});
    CHECK(shape_of(g, "features.2") == Shape{1, 64, 55, 55});
    CHECK(shape_of(g, "features.4.cat") == Shape{1, 128, 55, 55});
    CHECK(shape_of(g, "features.8") == Shape{1, 256, 13, 13});
    CHECK(shape_of(g, "features.12.cat") == Shape{1, 512, 13, 13});
    CHECK(shape_of(g, "classifier.1") == Shape{1, 1000, 13, 13});
    CHECK(op_named(g, "classifier.1").as<ConvAttrs>().relu);
}

TEST_CASE("zoo convs carry the folded bias and fuse ReLU where torchvision applies one",
          "[zoo]") {
    for (const Expected& m : kModels) {
        INFO(m.name);
        const Graph g = build_zoo_model(m.name);
        for (const Op& op : g.ops()) {
            INFO(op.name);
            CHECK(op.kind != OpKind::Relu);  // every ReLU is fused
            if (op.kind != OpKind::Conv) continue;
            CHECK(op.as<ConvAttrs>().bias);
            const bool residual_branch_end = op.name.ends_with(".conv3") ||
                                             op.name.ends_with(".downsample");
            CHECK(op.as<ConvAttrs>().relu == !(m.name == std::string("resnet50") &&
                                                residual_branch_end));
        }
    }
}
