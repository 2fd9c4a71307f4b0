// The search on fused graphs (src/fusion.h): schedules of fused graphs validate, and a residual
// convolution is never part of a merge stage (can_merge refuses it).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "search/ios_search.h"
#include "src/fusion.h"
#include "src/schedule.h"
#include "src/zoo/zoo.h"
#include "tests/search/search_fixtures.h"

using namespace iostune;

namespace {

SearchOptions quiet(SearchStrategy strategy) {
    SearchOptions o;
    o.strategy = strategy;
    o.progress = false;
    return o;
}

bool has_residual_conv(const Graph& g) {
    for (const Op& op : g.ops())
        if (op.kind == OpKind::Conv && op.as<ConvAttrs>().residual) return true;
    return false;
}

void check_schedule(const Graph& g, const Schedule& schedule) {
    CHECK_NOTHROW(validate(g, schedule));
    for (const Stage& stage : schedule.flat_stages()) {
        if (stage.strategy != StageStrategy::Merge) continue;
        for (int id : stage.groups.at(0)) CHECK_FALSE(g.op(id).as<ConvAttrs>().residual);
    }
}

}  // namespace

TEST_CASE("fusion search: can_merge refuses a residual convolution", "[search][fusion]") {
    Graph g("g", Shape{1, 8, 8, 8});
    const int z = test::conv(g, kGraphInput, 8, 1, 1, 0, 0, "z", false);
    ConvAttrs residual;
    residual.out_channels = 8;
    residual.residual = true;
    const int a = g.add(OpKind::Conv, residual, {kGraphInput, z}, "a");
    const int b = test::conv(g, kGraphInput, 8, 1, 1, 0, 0, "b", false);
    std::string why;
    CHECK_FALSE(can_merge(g, {a, b}, &why));
    CHECK_THAT(why, Catch::Contains("'a' is a residual convolution"));
    CHECK_FALSE(can_merge(g, {b, a}, &why));
    CHECK(can_merge(g, {z, b}));
}

TEST_CASE("fusion search: schedules searched on fused graphs validate", "[search][fusion]") {
    int fused_graphs = 0;
    for (uint32_t seed = 1; seed <= 30; ++seed) {
        INFO("random_dag seed " << seed);
        const FusedGraph f = fuse_epilogues(test::random_dag(seed, 12));
        if (f.counts.total() == 0) continue;
        ++fused_graphs;
        test::HashCostModel model(seed);
        for (auto strategy : {SearchStrategy::IosBoth, SearchStrategy::IosMerge}) {
            const SearchResult result = ios_search(f.graph, model, quiet(strategy));
            check_schedule(f.graph, result.schedule);
        }
    }
    CHECK(fused_graphs >= 10);

    const FusedGraph resnet = fuse_epilogues(build_zoo_model("resnet50", 1));
    REQUIRE(has_residual_conv(resnet.graph));
    test::HashCostModel model(3);
    check_schedule(resnet.graph, ios_search(resnet.graph, model, quiet(SearchStrategy::IosBoth)).schedule);
}
