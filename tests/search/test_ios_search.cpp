#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>

#include "search/ending_enumerator.h"
#include "search/ios_search.h"
#include "search/progress_bar.h"
#include "search/search_stats.h"
#include "src/blocks.h"
#include "src/error.h"
#include "src/zoo/zoo.h"
#include "tests/search/search_fixtures.h"

using namespace iostune;

namespace {

SearchOptions parallel(bool prune, bool reference = false) {
    SearchOptions o;
    o.strategy = SearchStrategy::IosParallel;
    o.prune = prune;
    o.reference_endings = reference;
    o.progress = false;
    return o;
}

BlockSearchStats only_block(const SearchResult& r) {
    REQUIRE(r.stats.blocks.size() == 1);
    return r.stats.blocks[0];
}

// The widest block (ties: the one with most ops), the one that dominates the search (the
// paper's Table 1 "largest block": Inception-C blocks have 12 ops but width 4).
std::vector<int> widest_block(const Graph& g) {
    const auto blocks = partition_blocks(g);
    return std::max_element(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) {
               return std::pair(a.width, a.ops.size()) < std::pair(b.width, b.ops.size());
           })->ops;
}

}  // namespace

TEST_CASE("the paper's Figure 5 has six states and twelve transitions", "[search]") {
    test::HashCostModel model(1);
    const auto stats = only_block(ios_search(test::figure5(), model, parallel(false)));
    CHECK(stats.states == 6);
    CHECK(stats.transitions == 12);
    CHECK(stats.schedules == 8);
}

TEST_CASE("Inception-E: the counts of the full and the pruned space", "[search]") {
    const Graph g = test::inception_e();
    REQUIRE(partition_blocks(g).size() == 1);
    test::HashCostModel model(3);

    const auto full = only_block(ios_search(g, model, parallel(false)));
    CHECK(full.ops == 11);
    CHECK(full.width == 6);
    CHECK(full.states == 181);
    CHECK(full.transitions == 5040);
    CHECK(full.schedules == 4410136);

    const auto pruned = only_block(ios_search(g, model, parallel(true)));
    CHECK(pruned.states == 181);
    CHECK(pruned.transitions == 4631);
    CHECK(pruned.schedules == 4226508);

    // The published implementation's ending family (the paper's Table 1 figures).
    const auto reference = only_block(ios_search(g, model, parallel(false, true)));
    CHECK(reference.transitions == 4871);
    CHECK(reference.schedules == 3757392);
    const auto reference_pruned = only_block(ios_search(g, model, parallel(true, true)));
    CHECK(reference_pruned.transitions == 4616);
    CHECK(reference_pruned.schedules == 3727132);
}

TEST_CASE("Inception-E: the zoo's largest Inception V3 block gives the same counts", "[search]") {
    const Graph zoo = build_zoo_model("inception_v3", 1);
    const std::vector<int> ops = widest_block(zoo);
    REQUIRE(ops.size() == 11);
    REQUIRE(antichain_width(zoo, ops) == 6);
    // Count that block's space directly (the whole network would cost every other block too).
    const PartDag dag = make_part_dag(zoo, ops);
    int64_t transitions = 0;
    std::map<uint64_t, double> schedules{{0, 1.0}};
    std::function<double(uint64_t)> count = [&](uint64_t s) {
        if (auto it = schedules.find(s); it != schedules.end()) return it->second;
        double total = 0;
        enumerate_endings(dag, s, EndingLimits{}, [&](const Ending& e) {
            ++transitions;
            total += count(s & ~e.ops);
        });
        return schedules[s] = total;
    };
    CHECK(count(dag.all()) == 4410136);
    CHECK(transitions == 5040);
    CHECK(count_states(dag, 1 << 20) == 181);
}

TEST_CASE("a merge-able ending is costed both ways under ios-both", "[search]") {
    const Graph g = test::inception_e();
    test::HashCostModel model(5);
    SearchOptions both;
    both.progress = false;
    const auto b = only_block(ios_search(g, model, both));
    const auto p = only_block(ios_search(g, model, parallel(true)));
    // Same endings (transitions), more stage choices (schedules) once merges count.
    CHECK(b.transitions == p.transitions);
    CHECK(b.schedules > p.schedules);

    SearchOptions merge = both;
    merge.strategy = SearchStrategy::IosMerge;
    const auto result = ios_search(g, model, merge);
    CHECK_NOTHROW(validate(g, result.schedule));
    for (const Stage& stage : result.schedule.flat_stages()) {
        if (stage.strategy == StageStrategy::Concurrent)
            CHECK(stage.groups == std::vector<std::vector<int>>{{stage.groups[0][0]}});
        else
            CHECK(can_merge(g, stage.groups[0]));
    }
}

TEST_CASE("ios-merge takes merge stages when they are cheaper", "[search]") {
    // Three mergeable convolutions of the input feeding a concat.
    Graph g("three", Shape{1, 8, 8, 8});
    const int a = test::conv(g, kGraphInput, 8, 1, 1, 0, 0, "a");
    const int b = test::conv(g, kGraphInput, 8, 3, 3, 1, 1, "b");
    const int c = test::conv(g, kGraphInput, 8, 1, 1, 0, 0, "c");
    g.add(OpKind::Concat, ConcatAttrs{}, {a, b, c}, "cat");

    class MergeIsCheap : public CostModel {
    public:
        StageMeasurement measure(const Graph&, const Stage& stage) override {
            StageMeasurement m;
            m.latency_ms = stage.strategy == StageStrategy::Merge ? 1.0 : 5.0;
            return m;
        }
        std::string name() const override { return "merge-is-cheap"; }
        bool simulated() const override { return true; }
    } model;
    for (auto strategy : {SearchStrategy::IosMerge, SearchStrategy::IosBoth}) {
        SearchOptions o;
        o.strategy = strategy;
        o.progress = false;
        const auto result = ios_search(g, model, o);
        CHECK_NOTHROW(validate(g, result.schedule));
        const auto stages = result.schedule.flat_stages();
        REQUIRE(stages.size() == 2);
        CHECK(stages[0] == Stage{StageStrategy::Merge, {{0, 1, 2}}});
        CHECK(result.latency_ms == 6.0);
    }
    const auto concurrent = ios_search(g, model, parallel(true));
    for (const Stage& stage : concurrent.schedule.flat_stages())
        CHECK(stage.strategy == StageStrategy::Concurrent);
}

TEST_CASE("shrinking r or s never adds transitions", "[search]") {
    for (uint32_t seed : {1u, 2u, 3u, 4u}) {
        const Graph g = seed == 4 ? test::inception_e() : test::random_dag(seed, 10);
        test::HashCostModel model(seed);
        auto transitions = [&](int r, int s) {
            SearchOptions o = parallel(true);
            o.max_group_ops = r;
            o.max_groups = s;
            return ios_search(g, model, o).stats.totals().transitions;
        };
        const int64_t unpruned = ios_search(g, model, parallel(false)).stats.totals().transitions;
        for (int r = 1; r <= 4; ++r) {
            for (int s = 1; s <= 4; ++s) {
                INFO("seed " << seed << " r " << r << " s " << s);
                const int64_t here = transitions(r, s);
                CHECK(here <= transitions(r + 1, s));
                CHECK(here <= transitions(r, s + 1));
                CHECK(here <= unpruned);
            }
        }
    }
}

TEST_CASE("every searched schedule is valid", "[search]") {
    for (uint32_t seed = 10; seed < 22; ++seed) {
        const Graph g = test::random_dag(seed, 12);
        for (auto strategy : {SearchStrategy::IosBoth, SearchStrategy::IosParallel,
                              SearchStrategy::IosMerge}) {
            test::HashCostModel model(seed);
            SearchOptions o;
            o.strategy = strategy;
            o.progress = false;
            const auto result = ios_search(g, model, o);
            INFO("seed " << seed << " " << to_string(strategy));
            CHECK_NOTHROW(validate(g, result.schedule));
            CHECK(result.stats.totals().ops == g.size());
            // Stage costs are cached: the model never sees a stage twice.
            CHECK(size_t(model.calls()) == model.distinct());
            CHECK(result.stats.totals().stages_costed == model.calls());
        }
    }
}

TEST_CASE("the search caches stage costs by signature", "[search]") {
    test::HashCostModel model(9);
    const auto stats = only_block(ios_search(test::inception_e(), model, parallel(true)));
    CHECK(stats.stages_costed == model.calls());
    // Every transition asks for one concurrent stage cost: from the model or from the cache.
    CHECK(stats.stages_costed + stats.cache_hits == stats.transitions);
    CHECK(stats.cache_hits > 0);
}

TEST_CASE("failed stages are unusable, not fatal", "[search]") {
    const Graph g = test::inception_e();
    test::HashCostModel model(11, /*fail_one_in=*/3);
    const auto result = ios_search(g, model, parallel(true));
    CHECK(result.stats.blocks[0].stages_failed > 0);
    CHECK_NOTHROW(validate(g, result.schedule));

    // The chosen stages' costs are all real: re-cost them and compare with the prediction.
    test::HashCostModel again(11, 3);
    double total = 0;
    for (const Stage& stage : result.schedule.flat_stages()) {
        const auto m = again.measure(g, stage);
        CHECK(m.ok);
        total += m.latency_ms;
    }
    CHECK(total == result.latency_ms);

    class AlwaysFails : public CostModel {
    public:
        StageMeasurement measure(const Graph&, const Stage&) override {
            StageMeasurement m;
            m.ok = false;
            m.error = "out of memory";
            return m;
        }
        std::string name() const override { return "broken"; }
        bool simulated() const override { return false; }
    } broken;
    CHECK_THROWS_WITH(ios_search(g, broken, parallel(true)),
                      Catch::Contains("no usable schedule") && Catch::Contains("out of memory"));
}

TEST_CASE("large blocks are split into parts that fit the DP", "[search]") {
    const Graph g = test::inception_e();
    test::HashCostModel model(13);
    SearchOptions o = parallel(true);
    o.max_part_ops = 4;
    const auto by_ops = ios_search(g, model, o);
    CHECK(by_ops.stats.blocks[0].parts == 3);
    CHECK_NOTHROW(validate(g, by_ops.schedule));

    o = parallel(true);
    o.max_part_states = 40;
    const auto by_states = ios_search(g, model, o);
    CHECK(by_states.stats.blocks[0].parts > 1);
    CHECK(by_states.stats.blocks[0].states < 181);
    CHECK_NOTHROW(validate(g, by_states.schedule));
    // Splitting only removes choices.
    const auto whole = ios_search(g, model, parallel(true));
    CHECK(whole.latency_ms <= by_ops.latency_ms);
    CHECK(whole.latency_ms <= by_states.latency_ms);
}

TEST_CASE("bad search options are refused", "[search]") {
    test::HashCostModel model(1);
    SearchOptions o = parallel(true);
    o.max_group_ops = 0;
    CHECK_THROWS_WITH(ios_search(test::figure5(), model, o), Catch::Contains("r >= 1"));
    o = parallel(true);
    o.max_part_ops = 65;
    CHECK_THROWS_AS(ios_search(test::figure5(), model, o), Error);
    CHECK(search_strategy_from_string("ios-merge") == SearchStrategy::IosMerge);
    CHECK_FALSE(search_strategy_from_string("greedy").has_value());
}

TEST_CASE("search statistics print as a table and as JSON", "[search]") {
    test::HashCostModel model(2);
    const auto result = ios_search(test::inception_e(), model, parallel(false));
    const std::string table = format_stats_table(result.stats);
    CHECK_THAT(table, Catch::Contains("transitions"));
    CHECK_THAT(table, Catch::Contains("4410136"));
    CHECK_THAT(table, Catch::Contains("total"));
    const auto doc = stats_to_json(result.stats);
    CHECK(doc["blocks"][0]["transitions"] == 5040);
    CHECK(doc["blocks"][0]["schedules"] == 4410136);
    CHECK(doc["blocks"][0]["width"] == 6);
    CHECK(doc["totals"]["ops"] == 11);
    CHECK_FALSE(doc["totals"].contains("block"));
    CHECK(format_count(1e30) == "1e+30");
    CHECK(format_duration(65) == "01:05");
    CHECK(format_duration(3725) == "1:02:05");
}
