// [gpu] The per-operator profile: each op's geometry, its kernels' times and its roofline, as
// `iostune profile --json` writes them for scripts/bench/op_parity.py and profile_breakdown.py.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "profiler/model_profile.h"
#include "profiler/profile_report.h"
#include "src/weights.h"
#include "tests/gpu/engine_fixtures.h"

using namespace iostune;
using namespace iostune::test;

TEST_CASE("the profile gives every op its geometry, kernel times and roofline", "[gpu][profile]") {
    Graph graph = every_op_graph(2);
    init_random_weights(graph, 7);
    Engine engine(graph, options_with(Precision::Tf32));
    ProfileOptions options;
    options.iterations = 3;
    const ModelProfile profile = profile_model(engine, options);
    REQUIRE(profile.ops.size() == size_t(graph.size()));
    REQUIRE(profile.ceilings.flops_per_s > 0);
    REQUIRE(profile.ceilings.bytes_per_s > 0);
    const nlohmann::json doc = profile_to_json(profile);

    for (const Op& op : graph.ops()) {
        const OpProfile& p = profile.ops[size_t(op.id)];
        INFO(fmt::format("op {} '{}' ({}): {:.1f} us, {} kernels, {} transfers", op.id, op.name,
                         to_string(op.kind), p.latency_us, p.kernels, p.transfers));
        CHECK(p.output == op.output);
        REQUIRE(p.input_shapes.size() == op.inputs.size());
        for (size_t i = 0; i < op.inputs.size(); ++i)
            CHECK(p.input_shapes[i] == graph.tensor_shape(op.inputs[i]));
        CHECK(p.attrs.index() == op.attrs.index());

        // The engine launches the same kernels every run, so each has a median time.
        CHECK(p.kernel_times.size() == size_t(p.kernels));
        double kernel_sum = 0;
        for (const KernelTime& k : p.kernel_times) {
            CHECK(!k.name.empty());
            CHECK(k.us > 0);
            kernel_sum += k.us;
        }
        if (p.kernels > 0 && p.transfers == 0)
            CHECK(kernel_sum == Approx(p.latency_us).epsilon(0.5));  // medians of parts vs of the sum
        if (op.kind == OpKind::SepConv) CHECK(p.kernel_times.size() >= 2);  // depthwise, pointwise

        const RooflineBound expected = roofline_bound(profile.ceilings, p.flops, p.bytes, p.latency_us);
        CHECK(p.roofline.bound_us == Approx(expected.bound_us));
        CHECK(p.compute_bound == (p.intensity > profile.ceilings.ridge_flops_per_byte()));
        if (p.latency_us > 0 && p.bytes > 0) {
            CHECK(p.roofline.bound_us > 0);
            CHECK(p.roofline.fraction == Approx(p.roofline.bound_us / p.latency_us));
        }
        const nlohmann::json& j = doc["ops"][size_t(op.id)];
        CHECK(j["kernel_times"].size() == p.kernel_times.size());
        CHECK(j["input_shapes"].size() == op.inputs.size());
        CHECK(j["roofline_fraction"].get<double>() == Approx(p.roofline.fraction));
    }
}
