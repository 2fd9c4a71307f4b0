#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "search/baselines.h"
#include "search/block_dag.h"
#include "search/greedy_scheduler.h"
#include "search/ios_search.h"
#include "search/nimble_scheduler.h"
#include "search/op_estimate.h"
#include "search/opara_scheduler.h"
#include "search/sim_cost_model.h"
#include "src/blocks.h"
#include "src/error.h"
#include "src/zoo/zoo.h"
#include "test_graphs.h"

using namespace iostune;

namespace {

size_t stream_count_of_block(const Graph& g, const Block& block) {
    return nimble_streams(g, block.ops).streams.size();
}

// Every group of every stage is a consecutive run of one stream, and each stream's runs appear
// in stream order: the stages keep the stream assignment.
void require_stages_follow_streams(const std::vector<Stage>& stages,
                                   const std::vector<std::vector<int>>& streams) {
    std::vector<size_t> next(streams.size(), 0);
    for (const Stage& stage : stages)
        for (const auto& group : stage.groups) {
            const auto s = std::find_if(streams.begin(), streams.end(), [&](const auto& stream) {
                return std::find(stream.begin(), stream.end(), group.front()) != stream.end();
            });
            REQUIRE(s != streams.end());
            const size_t index = size_t(s - streams.begin());
            for (int op : group) REQUIRE((*s).at(next[index]++) == op);
        }
    for (size_t i = 0; i < streams.size(); ++i) REQUIRE(next[i] == streams[i].size());
}

OpResources resources(bool compute_bound, double share, int64_t grid) {
    OpResources r;
    r.compute_bound = compute_bound;
    r.block_sm_share = share;
    r.grid_blocks = grid;
    r.measured = true;
    return r;
}

}  // namespace

TEST_CASE("every baseline validates on hand-built graphs", "[baselines]") {
    for (const Graph& g : {test::diamond(), test::inception_like(), test::hourglass()}) {
        const auto blocks = partition_blocks(g);
        for (const auto& name : baseline_names()) {
            INFO(g.name() << " / " << name);
            const Schedule s = make_baseline(name, g, nullptr);
            REQUIRE_NOTHROW(validate(g, s));
            REQUIRE(s.blocks.size() == blocks.size());
        }
    }
}

TEST_CASE("greedy puts every ready op in the next stage", "[baselines]") {
    const Graph g = test::diamond();
    const auto stages = greedy_schedule(g).flat_stages();
    REQUIRE(stages.size() == 3);
    CHECK(stages[0].groups == std::vector<std::vector<int>>{{0}});
    CHECK(stages[1].groups == std::vector<std::vector<int>>{{1}, {2}});
    CHECK(stages[2].groups == std::vector<std::vector<int>>{{3}});

    // Inception-like: stem | four branch heads | second ops | third op | concat.
    const Graph inc = test::inception_like();
    const auto inc_stages = greedy_schedule(inc).flat_stages();
    REQUIRE(inc_stages.size() == 5);
    CHECK(inc_stages[1].groups.size() == 4);
    for (const Stage& stage : inc_stages) {
        CHECK(stage.strategy == StageStrategy::Concurrent);
        for (const auto& group : stage.groups) CHECK(group.size() == 1);
    }
}

TEST_CASE("nimble: one stream per chain, as many as the width when chains are paths",
          "[baselines]") {
    SECTION("inception-like block: 4 branches, 4 streams") {
        const Graph g = test::inception_like();
        const auto blocks = partition_blocks(g);
        REQUIRE(blocks.size() == 2);
        const Block& block = blocks[1];
        REQUIRE(block.width == 4);
        const StreamAssignment a = nimble_streams(g, block.ops);
        CHECK(a.streams.size() == size_t(block.width));
        // G' = the graph itself (no redundant edge): 9 edges, 6 matched into the streams.
        CHECK(a.syncs == 3);
        require_stages_follow_streams(nimble_block_stages(g, block), a.streams);
    }
    SECTION("diamond: the join continues one branch's stream") {
        const Graph g = test::diamond();
        const Block block = partition_blocks(g)[1];
        const StreamAssignment a = nimble_streams(g, block.ops);
        CHECK(a.streams == std::vector<std::vector<int>>{{1, 3}, {2}});
        CHECK(a.syncs == 1);
        const auto stages = nimble_block_stages(g, block);
        REQUIRE(stages.size() == 2);
        CHECK(stages[0].groups == std::vector<std::vector<int>>{{1}, {2}});
        CHECK(stages[1].groups == std::vector<std::vector<int>>{{3}});
    }
    SECTION("transitive edges are dropped before matching") {
        const Graph g = test::hourglass();
        const Block block = partition_blocks(g)[1];
        REQUIRE(block.width == 2);
        const BlockDag dag = BlockDag::of(g, block.ops);
        // x1 -> z is implied by x1 -> m -> y1 -> z.
        CHECK(dag.transitive_reduction().size() == 6);
        const StreamAssignment a = nimble_streams(g, block.ops);
        // Paths of G' cannot skip over m: one more stream than the width.
        CHECK(a.streams.size() == 3);
        CHECK(a.syncs == 6 - 3);
        require_stages_follow_streams(nimble_block_stages(g, block), a.streams);
    }
}

TEST_CASE("opara: a producer hands its stream to one consumer", "[baselines]") {
    const Graph g = test::diamond();
    const Block block = partition_blocks(g)[1];
    const StreamAssignment a = opara_streams(g, block.ops);
    CHECK(a.streams == std::vector<std::vector<int>>{{1, 3}, {2}});
    CHECK(a.syncs == 1);

    const Graph inc = test::inception_like();
    const Block inc_block = partition_blocks(inc)[1];
    const StreamAssignment b = opara_streams(inc, inc_block.ops);
    CHECK(b.streams.size() == 4);  // each branch head opens a stream; concat continues b1's
    for (const auto& stream : b.streams) CHECK(std::is_sorted(stream.begin(), stream.end()));
}

TEST_CASE("opara launches compute- and memory-bound ops alternately, smallest first",
          "[baselines]") {
    // stem, then four independent ops: two convs, two relus; all joined by a concat.
    Graph g("mix", Shape{1, 16, 28, 28});
    const int stem = g.add(OpKind::Conv, test::conv(16, 3), {kGraphInput}, "stem");
    const int c_big = g.add(OpKind::Conv, test::conv(64, 3), {stem}, "c_big");
    const int c_small = g.add(OpKind::Conv, test::conv(16, 1), {stem}, "c_small");
    const int r_big = g.add(OpKind::Relu, ReluAttrs{}, {stem}, "r_big");
    const int r_small = g.add(OpKind::Relu, ReluAttrs{}, {stem}, "r_small");
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {c_big, c_small, r_big, r_small}, "cat");
    const Block block = partition_blocks(g).back();
    REQUIRE(block.ops == std::vector<int>{c_big, c_small, r_big, r_small, cat});

    OpResourceTable table;
    table.source = "test";
    table.ops = {resources(true, 0.5, 100),    resources(true, 0.5, 400),
                 resources(true, 0.25, 50),    resources(false, 0.125, 200),
                 resources(false, 0.125, 100), resources(false, 0.125, 300)};
    const auto order = opara_launch_order(g, block.ops, table);
    // compute (smallest share) -> memory (same share, smaller grid) -> compute -> memory -> cat.
    CHECK(order == std::vector<int>{c_small, r_small, c_big, r_big, cat});

    // Flip the classes: the first pick is still a compute-bound op, then they alternate.
    for (int id : {c_big, c_small, r_big, r_small}) table.ops[size_t(id)].compute_bound ^= true;
    CHECK(opara_launch_order(g, block.ops, table) ==
          std::vector<int>{r_small, c_small, r_big, c_big, cat});

    // Launch order decides group order in the stage; the schedule validates.
    table.ops[size_t(cat)].compute_bound = false;
    const Schedule s = opara_schedule(g, table);
    REQUIRE_NOTHROW(validate(g, s));
    const auto stages = opara_block_stages(g, block, table);
    REQUIRE(stages.size() == 2);
    REQUIRE(stages[0].groups.size() == 4);
    CHECK(stages[0].groups[0].front() == r_small);
    CHECK(stages[0].groups[1].front() == c_small);

    // With estimated resources, convs come out compute-bound and relus memory-bound.
    const OpResourceTable est = estimate_resource_table(g, device_profile("h100"), Precision::Tf32);
    CHECK(est.at(c_big).compute_bound);
    CHECK_FALSE(est.at(r_big).compute_bound);
    const auto est_order = opara_launch_order(g, block.ops, est);
    REQUIRE(est_order.size() == 5);
    for (size_t i = 0; i + 1 < 4; ++i)
        CHECK(est.at(est_order[i]).compute_bound != est.at(est_order[i + 1]).compute_bound);
}

TEST_CASE("make_baseline rejects unknown names and foreign resource tables", "[baselines]") {
    const Graph g = test::diamond();
    try {
        make_baseline("fastest", g, nullptr);
        FAIL("no error for an unknown baseline");
    } catch (const Error& e) {
        const std::string what = e.what();
        CHECK(what.find("fastest") != std::string::npos);
        CHECK(what.find("nimble") != std::string::npos);
        CHECK(what.find("opara") != std::string::npos);
    }
    OpResourceTable short_table;
    short_table.source = "other graph";
    short_table.ops.resize(2);
    CHECK_THROWS_AS(make_baseline("opara", g, &short_table), Error);
    CHECK_THROWS_AS(short_table.at(3), Error);
}

TEST_CASE("every baseline validates on the zoo models", "[baselines][zoo]") {
    for (const auto& name : zoo_model_names()) {
        const Graph g = build_zoo_model(name, 1);
        const auto blocks = partition_blocks(g);
        const size_t sequential_stages = make_baseline("sequential", g).flat_stages().size();
        for (const auto& baseline : baseline_names()) {
            INFO(name << " / " << baseline);
            const Schedule s = make_baseline(baseline, g);
            REQUIRE_NOTHROW(validate(g, s));
            REQUIRE(s.blocks.size() == blocks.size());
            CHECK(s.flat_stages().size() <= sequential_stages);
        }
        for (const Block& block : blocks) {
            INFO(name << " block " << block.index);
            // A path cover of the transitive reduction is never smaller than the width.
            CHECK(stream_count_of_block(g, block) >= size_t(block.width));
        }
    }
}

TEST_CASE("under one cost model, IOS is never slower than the baselines in its space",
          "[baselines]") {
    SimCostModel model;
    const Graph g = test::inception_like();
    SearchOptions options;
    options.progress = false;
    options.prune = false;
    const SearchResult ios = ios_search(g, model, options);
    for (const std::string name : {"sequential", "greedy"}) {
        double predicted = 0.0;
        for (const Stage& stage : make_baseline(name, g).flat_stages())
            predicted += model.measure(g, stage).latency_ms;
        INFO(name << ": " << predicted << " ms, IOS " << ios.latency_ms << " ms");
        CHECK(ios.latency_ms <= predicted + 1e-9);
    }
}
