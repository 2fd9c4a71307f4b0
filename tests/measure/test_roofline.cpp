// The profiler's roofline arithmetic and its rendering, on a hand-made profile (no GPU).
#include <catch2/catch.hpp>

#include "profiler/profile_report.h"
#include "profiler/roofline.h"

using namespace iostune;

namespace {

DeviceCeilings ceilings(double tflops, double tbytes_per_s) {
    DeviceCeilings c;
    c.flops_per_s = tflops * 1e12;
    c.bytes_per_s = tbytes_per_s * 1e12;
    return c;
}

}  // namespace

TEST_CASE("the roofline bound is the larger of the compute and the memory time", "[roofline]") {
    const DeviceCeilings h100ish = ceilings(400, 3);  // ridge 133 FLOP/B
    // 4 GFLOP over 10 MB: 10 us of arithmetic, 3.33 us of traffic; measured 40 us.
    const RooflineBound conv = roofline_bound(h100ish, 4'000'000'000, 10'000'000, 40.0);
    CHECK(conv.compute_bound);
    CHECK(conv.bound_us == Approx(10.0));
    CHECK(conv.fraction == Approx(0.25));
    // 1 MFLOP over 30 MB: 10 us of traffic; measured 12.5 us.
    const RooflineBound add = roofline_bound(h100ish, 1'000'000, 30'000'000, 12.5);
    CHECK_FALSE(add.compute_bound);
    CHECK(add.bound_us == Approx(10.0));
    CHECK(add.fraction == Approx(0.8));
}

TEST_CASE("the roofline is unknown without ceilings or a measured time", "[roofline]") {
    const RooflineBound no_ceilings = roofline_bound(DeviceCeilings{}, 1000, 1000, 5.0);
    CHECK(no_ceilings.bound_us == 0);
    CHECK(no_ceilings.fraction == 0);
    CHECK_FALSE(no_ceilings.compute_bound);
    const RooflineBound no_time = roofline_bound(ceilings(100, 1), 1'000'000, 0, 0.0);
    CHECK(no_time.bound_us == Approx(0.01));
    CHECK(no_time.fraction == 0);
}

TEST_CASE("the profile's table and JSON carry each op's roofline, geometry and kernels",
          "[roofline]") {
    ModelProfile profile;
    profile.model = "tiny";
    profile.batch = 2;
    profile.ceilings = ceilings(400, 3);
    OpProfile op;
    op.op_id = 0;
    op.name = "conv_a";
    op.kind = OpKind::Conv;
    ConvAttrs attrs;
    attrs.out_channels = 8;
    attrs.kernel_h = attrs.kernel_w = 3;
    attrs.pad_h = attrs.pad_w = 1;
    attrs.relu = true;
    op.attrs = attrs;
    op.inputs = {kGraphInput};
    op.input_shapes = {Shape{2, 4, 16, 16}};
    op.output = Shape{2, 8, 16, 16};
    op.latency_us = 40.0;
    op.flops = 4'000'000'000;
    op.bytes = 10'000'000;
    op.roofline = roofline_bound(profile.ceilings, op.flops, op.bytes, op.latency_us);
    op.compute_bound = op.roofline.compute_bound;
    op.kernel_times = {{"nchwToNhwcKernel", 3.0}, {"sm90_xmma_fprop", 37.0}};
    profile.ops.push_back(op);
    profile.op_sum_us = op.latency_us;

    const std::string table = format_profile_table(profile);
    CHECK_THAT(table, Catch::Contains("roof"));
    CHECK_THAT(table, Catch::Contains("compute   25%"));

    const nlohmann::json doc = profile_to_json(profile);
    const nlohmann::json& j = doc["ops"][0];
    CHECK(j["roofline_us"].get<double>() == Approx(10.0));
    CHECK(j["roofline_fraction"].get<double>() == Approx(0.25));
    CHECK(j["attrs"]["kernel_h"] == 3);
    CHECK(j["attrs"]["relu"] == true);
    CHECK(j["inputs"] == nlohmann::json::array({-1}));
    CHECK(j["input_shapes"] == nlohmann::json::parse("[[2, 4, 16, 16]]"));
    CHECK(j["output_shape"] == nlohmann::json::parse("[2, 8, 16, 16]"));
    REQUIRE(j["kernel_times"].size() == 2);
    CHECK(j["kernel_times"][1]["name"] == "sm90_xmma_fprop");
    CHECK(j["kernel_times"][1]["us"].get<double>() == Approx(37.0));
}
