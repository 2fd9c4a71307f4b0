#include <catch2/catch.hpp>

#include "search/ios_search.h"
#include "src/blocks.h"
#include "src/error.h"
#include "src/schedule.h"
#include "tests/search/search_fixtures.h"

using namespace iostune;
using iostune::test::conv;

namespace {

// input -> c0 (1x1), c1 (3x3 pad 1), c2 (1x3 pad 0,1), c3 (3x3 pad 0: centre off), c4 (2x2),
// c5 (1x1 stride 2), c6 (1x1 no ReLU), p7 (pool), c8 (1x1 reading c0), concat of all.
Graph merge_zoo() {
    Graph g("merges", Shape{1, 16, 8, 8});
    conv(g, kGraphInput, 8, 1, 1, 0, 0, "c0");
    conv(g, kGraphInput, 8, 3, 3, 1, 1, "c1");
    conv(g, kGraphInput, 8, 1, 3, 0, 1, "c2");
    ConvAttrs off;
    off.out_channels = 8;
    off.kernel_h = off.kernel_w = 3;
    off.pad_h = off.pad_w = 2;
    off.relu = true;
    off.dilation_h = off.dilation_w = 1;
    g.add(OpKind::Conv, off, {kGraphInput}, "c3");  // 3x3 pad 2 -> 10x10: other output size
    ConvAttrs even = off;
    even.kernel_h = even.kernel_w = 2;
    even.pad_h = even.pad_w = 0;
    g.add(OpKind::Conv, even, {kGraphInput}, "c4");  // 7x7
    ConvAttrs strided;
    strided.out_channels = 8;
    strided.stride_h = strided.stride_w = 2;
    strided.relu = true;
    g.add(OpKind::Conv, strided, {kGraphInput}, "c5");
    conv(g, kGraphInput, 8, 1, 1, 0, 0, "c6", /*relu=*/false);
    PoolAttrs pool;
    pool.kernel_h = pool.kernel_w = 3;
    pool.pad_h = pool.pad_w = 1;
    g.add(OpKind::MaxPool, pool, {kGraphInput}, "p7");
    conv(g, 0, 8, 1, 1, 0, 0, "c8");
    return g;
}

std::string merge_refusal(const Graph& g, std::vector<int> ops) {
    std::string why;
    CHECK_FALSE(can_merge(g, ops, &why));
    return why;
}

}  // namespace

TEST_CASE("can_merge accepts centred convolutions that read one tensor", "[search][schedule]") {
    const Graph g = merge_zoo();
    CHECK(can_merge(g, {0, 1}));
    CHECK(can_merge(g, {0, 1, 2}));
    CHECK(can_merge(g, {2, 0}));
}

TEST_CASE("can_merge refuses each illegal merge with a reason", "[search][schedule]") {
    const Graph g = merge_zoo();
    CHECK_THAT(merge_refusal(g, {0}), Catch::Contains("at least two"));
    CHECK_THAT(merge_refusal(g, {0, 0}), Catch::Contains("twice"));
    CHECK_THAT(merge_refusal(g, {0, 3}), Catch::Contains("outputs"));
    CHECK_THAT(merge_refusal(g, {0, 4}), Catch::Contains("even kernel"));
    CHECK_THAT(merge_refusal(g, {0, 5}), Catch::Contains("stride"));
    CHECK_THAT(merge_refusal(g, {0, 6}), Catch::Contains("bias, ReLU, activation or PReLU"));
    CHECK_THAT(merge_refusal(g, {0, 7}), Catch::Contains("not a Conv"));
    CHECK_THAT(merge_refusal(g, {1, 8}), Catch::Contains("same tensor"));
    CHECK_THAT(merge_refusal(g, {0, 42}), Catch::Contains("not in graph"));
}

TEST_CASE("can_merge refuses kernels whose centres do not line up", "[search][schedule]") {
    // With stride 1 equal output sizes imply aligned centres; with stride 3 on 9x9 a 1x1 (pad 0)
    // and a 3x3 (pad 0) both give 3x3 outputs, but their centres sit one pixel apart.
    Graph g("centres", Shape{1, 4, 9, 9});
    ConvAttrs a;
    a.out_channels = 4;
    a.stride_h = a.stride_w = 3;
    g.add(OpKind::Conv, a, {kGraphInput}, "one_by_one");
    ConvAttrs b = a;
    b.kernel_h = b.kernel_w = 3;
    g.add(OpKind::Conv, b, {kGraphInput}, "three_valid");
    ConvAttrs c = b;
    c.pad_h = c.pad_w = 1;
    g.add(OpKind::Conv, c, {kGraphInput}, "three_same");
    REQUIRE(g.op(0).output == g.op(1).output);
    CHECK_THAT(merge_refusal(g, {0, 1}), Catch::Contains("centres"));
    CHECK(can_merge(g, {0, 2}));
}

namespace {

// Parallel separable convolutions, as in a NASNet cell: s0 and s1 (3x3, 5x5) read c0 and c1,
// s2 (3x3) reads c0 too; s3 has 16 output channels, s4 stride 2, s5 no pre-ReLU, s6 reads s0.
Graph sepconv_branches() {
    Graph g("branches", Shape{1, 8, 8, 8});
    conv(g, kGraphInput, 8, 1, 1, 0, 0, "c0");
    conv(g, kGraphInput, 8, 1, 1, 0, 0, "c1");
    const auto sep = [&](int input, int kernel, int out, int stride, bool pre_relu,
                         const char* name) {
        SepConvAttrs a;
        a.out_channels = out;
        a.kernel = kernel;
        a.pad = kernel / 2;
        a.stride = stride;
        a.pre_relu = pre_relu;
        return g.add(OpKind::SepConv, a, {input}, name);
    };
    const int s0 = sep(0, 3, 8, 1, true, "s0");
    sep(1, 5, 8, 1, true, "s1");
    sep(0, 3, 8, 1, true, "s2");
    sep(1, 3, 16, 1, true, "s3");
    sep(0, 3, 8, 2, true, "s4");
    sep(1, 3, 8, 1, false, "s5");
    sep(s0, 3, 8, 1, true, "s6");
    return g;
}

}  // namespace

TEST_CASE("separable convolutions of one shape merge batched, whatever they read",
          "[search][schedule]") {
    const Graph g = sepconv_branches();
    CHECK(can_merge(g, {2, 3}));     // different inputs, kernels 3 and 5
    CHECK(can_merge(g, {2, 3, 4}));  // two read one tensor
    CHECK(merge_kind(g, {2, 3}) == MergeKind::Batched);
    CHECK(merge_kind(g, {0, 1}) == MergeKind::Stacked);
    CHECK_THAT(merge_refusal(g, {2, 5}), Catch::Contains("shape"));      // 16 channels
    CHECK_THAT(merge_refusal(g, {2, 6}), Catch::Contains("shape"));      // stride 2
    CHECK_THAT(merge_refusal(g, {2, 7}), Catch::Contains("pre-ReLU"));   // no pre-ReLU
    CHECK_THAT(merge_refusal(g, {2, 8}), Catch::Contains("reads the output of 's0'"));
    CHECK_THAT(merge_refusal(g, {2, 0}), Catch::Contains("separable convolutions only"));
    {  // a ReLU after (the fusion pass's post_relu) is another key: one launch applies it or not
        Graph with_relu = sepconv_branches();
        SepConvAttrs a;
        a.out_channels = 8;
        a.post_relu = true;
        const int s7 = with_relu.add(OpKind::SepConv, a, {1}, "s7");
        CHECK_THAT(merge_refusal(with_relu, {2, s7}), Catch::Contains("ReLU after"));
        CHECK(merge_key(with_relu, 2) != merge_key(with_relu, s7));
        CHECK(merge_key(with_relu, 2) == merge_key(g, 2));  // keys without one read as before
    }
    // The refinement's merge move groups by key: equal for one shape, whatever the input.
    CHECK(merge_key(g, 2) == merge_key(g, 3));
    CHECK(merge_key(g, 2) != merge_key(g, 5));
    CHECK(merge_key(g, 0) == merge_key(g, 1));  // convolutions: by the tensor they read (both the input)
    CHECK(merge_key(g, 0) != merge_key(g, 2));
    // A schedule holding the batched merge is valid; one merging s0 with its consumer is not.
    const auto one = [](int id) { return Stage{StageStrategy::Concurrent, {{id}}}; };
    Schedule ok;
    ok.blocks = {{one(0), one(1), Stage{StageStrategy::Merge, {{2, 3, 4}}}, one(5), one(6),
                  one(7), one(8)}};
    CHECK_NOTHROW(validate(g, ok));
    Schedule bad;
    bad.blocks = {{one(0), one(1), Stage{StageStrategy::Merge, {{2, 8}}}, one(3), one(4),
                   one(5), one(6), one(7)}};
    CHECK_THROWS_WITH(validate(g, bad), Catch::Contains("reads the output of 's0'"));
}

TEST_CASE("sequential_schedule runs one op per stage, block by block", "[search][schedule]") {
    const Graph g = test::inception_e();
    const Schedule s = sequential_schedule(g);
    const auto blocks = partition_blocks(g);
    REQUIRE(s.blocks.size() == blocks.size());
    const auto flat = s.flat_stages();
    REQUIRE(flat.size() == size_t(g.size()));
    for (size_t i = 0; i < flat.size(); ++i) {
        CHECK(flat[i].strategy == StageStrategy::Concurrent);
        CHECK(flat[i].groups == std::vector<std::vector<int>>{{int(i)}});
    }
    CHECK_NOTHROW(validate(g, s));
}

TEST_CASE("stage signatures and strategy names are canonical text", "[search][schedule]") {
    CHECK(stage_signature(Stage{StageStrategy::Concurrent, {{1, 2}, {3}}}) == "c:[1,2][3]");
    CHECK(stage_signature(Stage{StageStrategy::Merge, {{4, 5}}}) == "m:[4,5]");
    CHECK(std::string(to_string(StageStrategy::Concurrent)) == "concurrent");
    CHECK(std::string(to_string(StageStrategy::Merge)) == "merge");
}

TEST_CASE("schedules round-trip through JSON", "[search][schedule]") {
    Schedule s;
    s.blocks = {{Stage{StageStrategy::Concurrent, {{0}, {1, 2}}}},
                {Stage{StageStrategy::Merge, {{3, 4}}}, Stage{StageStrategy::Concurrent, {{5}}}}};
    const auto doc = schedule_to_json(s);
    CHECK(schedule_from_json(doc) == s);
    CHECK(schedule_from_json(nlohmann::json::parse(doc.dump())) == s);
    CHECK(doc["blocks"][1]["stages"][0]["strategy"] == "merge");

    // Barriers of a dataflow schedule (a memory limit's) are kept; a staged one has none.
    Schedule d = with_form(s, ScheduleForm::Dataflow);
    d.barriers = {1, 2};
    CHECK(schedule_to_json(d)["barriers"] == nlohmann::json::array({1, 2}));
    CHECK(schedule_from_json(schedule_to_json(d)) == d);
    CHECK(with_form(d, ScheduleForm::Staged).barriers.empty());
    CHECK_FALSE(schedule_to_json(s).contains("barriers"));

    // Priorities, one level per op, are kept (and kept by with_form); none: no key.
    Schedule p = s;
    p.priorities = {0, 3, 1, 0, 2, 0};
    CHECK(schedule_to_json(p)["priorities"] == nlohmann::json::array({0, 3, 1, 0, 2, 0}));
    CHECK(schedule_from_json(schedule_to_json(p)) == p);
    CHECK_FALSE(schedule_from_json(schedule_to_json(p)) == s);
    CHECK(with_form(p, ScheduleForm::Dataflow).priorities == p.priorities);
    CHECK(priority_of(p, 1) == 3);
    CHECK(priority_of(s, 1) == 0);
    CHECK(prioritised_ops(p) == 3);
    // Other priorities alone are the same launches (one memory plan); another form is not.
    CHECK(same_launches(p, s));
    CHECK_FALSE(same_launches(with_form(p, ScheduleForm::Dataflow), s));
    CHECK_FALSE(schedule_to_json(s).contains("priorities"));

    // A searched schedule too.
    const Graph g = test::inception_e();
    test::HashCostModel model(7);
    const auto result = ios_search(g, model);
    CHECK(schedule_from_json(schedule_to_json(result.schedule)) == result.schedule);
}

TEST_CASE("schedule_from_json names the bad part of the document", "[search][schedule]") {
    using nlohmann::json;
    auto error_of = [](const json& doc) {
        try {
            schedule_from_json(doc);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of(json::array()), Catch::Contains("must be an object"));
    CHECK_THAT(error_of(json{{"stages", 1}}), Catch::Contains("no \"blocks\""));
    CHECK_THAT(error_of(json{{"blocks", 3}}), Catch::Contains("blocks must be an array"));
    CHECK_THAT(error_of(json::parse(R"({"blocks":[{"stages":[{"groups":[[0]]}]}]})")),
               Catch::Contains("blocks[0].stages[0] has no \"strategy\""));
    CHECK_THAT(error_of(json::parse(R"({"blocks":[{"stages":[{"strategy":"fast","groups":[[0]]}]}]})")),
               Catch::Contains("expected \"concurrent\" or \"merge\""));
    CHECK_THAT(error_of(json::parse(R"({"blocks":[{"stages":[{"strategy":"merge","groups":[[0,-1]]}]}]})")),
               Catch::Contains("blocks[0].stages[0].groups[0][1]"));
    CHECK_THAT(error_of(json::parse(R"({"blocks":[{"stages":[{"strategy":"merge","groups":[["a"]]}]}]})")),
               Catch::Contains("non-negative op id"));
    CHECK_THAT(error_of(json::parse(R"({"blocks":[{"stages":[{"strategy":"concurrent","groups":[[0]]}]}],"barriers":[0.5]})")),
               Catch::Contains("positive stage indices"));
    CHECK_THAT(error_of(json::parse(R"({"blocks":[{"stages":[{"strategy":"concurrent","groups":[[0]]}]}],"priorities":[4]})")),
               Catch::Contains("expected levels 0..3"));
    CHECK_THAT(error_of(json::parse(R"({"blocks":[{"stages":[{"strategy":"concurrent","groups":[[0]]}]}],"priorities":{"0":1}})")),
               Catch::Contains("priorities must be an array"));
}

TEST_CASE("validate rejects each kind of bad schedule", "[search][schedule]") {
    // figure5: a(0) -> b(1); c(2) independent. merge_zoo for merges.
    const Graph g = test::figure5();
    using S = Stage;
    const auto C = StageStrategy::Concurrent;
    auto error_of = [](const Graph& graph, const Schedule& s) {
        try {
            validate(graph, s);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("valid");
    };
    CHECK(error_of(g, Schedule{{{S{C, {{0, 1}, {2}}}}}}) == "valid");
    CHECK(error_of(g, Schedule{{{S{C, {{0}, {2}}}, S{C, {{1}}}}}}) == "valid");
    CHECK_THAT(error_of(g, Schedule{{{S{C, {{0, 1}}}}}}), Catch::Contains("never scheduled"));
    CHECK_THAT(error_of(g, Schedule{{{S{C, {{0, 1}, {2, 0}}}}}}), Catch::Contains("twice"));
    CHECK_THAT(error_of(g, Schedule{{{S{C, {{0, 1}, {7}}}}}}), Catch::Contains("another model"));
    CHECK_THAT(error_of(g, Schedule{{{S{C, {{1}, {2}}}, S{C, {{0}}}}}}),
               Catch::Contains("runs before its input"));
    CHECK_THAT(error_of(g, Schedule{{{S{C, {{1, 0}, {2}}}}}}), Catch::Contains("runs before its input"));
    CHECK_THAT(error_of(g, Schedule{{{S{C, {{0}, {1}, {2}}}}}}), Catch::Contains("another group"));
    CHECK_THAT(error_of(g, Schedule{{{S{C, {{0, 1}, {}, {2}}}}}}), Catch::Contains("empty group"));
    CHECK_THAT(error_of(g, Schedule{{{S{C, {}}, S{C, {{0, 1}, {2}}}}}}), Catch::Contains("is empty"));
    CHECK_THAT(error_of(g, Schedule{{{}, {S{C, {{0, 1}, {2}}}}}}), Catch::Contains("no stages"));
    // a and c are both convolutions of the input, but a is 3x3 pad 1 and c is 1x1: mergeable.
    CHECK(error_of(g, Schedule{{{S{StageStrategy::Merge, {{0, 2}}}, S{C, {{1}}}}}}) == "valid");
    CHECK_THAT(error_of(g, Schedule{{{S{StageStrategy::Merge, {{0}, {2}}}, S{C, {{1}}}}}}),
               Catch::Contains("exactly one group"));
    CHECK_THAT(error_of(g, Schedule{{{S{StageStrategy::Merge, {{0}}}, S{C, {{1}, {2}}}}}}),
               Catch::Contains("at least two"));
    CHECK_THAT(error_of(g, Schedule{{{S{C, {{0}}}, S{StageStrategy::Merge, {{1, 2}}}}}}),
               Catch::Contains("not a Conv"));
    // Barriers: dataflow only, ascending, between stages.
    Schedule barred{{{S{C, {{0}, {2}}}, S{C, {{1}}}}}, ScheduleForm::Dataflow, {1}};
    CHECK(error_of(g, barred) == "valid");
    CHECK_THAT(error_of(g, Schedule{barred.blocks, ScheduleForm::Staged, {1}}),
               Catch::Contains("for the dataflow form"));
    for (const std::vector<int>& bad : {std::vector<int>{0}, {2}, {1, 1}})
        CHECK_THAT(error_of(g, Schedule{barred.blocks, ScheduleForm::Dataflow, bad}),
                   Catch::Contains("ascending stage indices"));
    // Priorities: none, or one level in 0..kMaxPriority per op.
    Schedule urgent{{{S{C, {{0, 1}, {2}}}}}};
    urgent.priorities = {1, 1, 0};
    CHECK(error_of(g, urgent) == "valid");
    urgent.priorities = {1, 0};
    CHECK_THAT(error_of(g, urgent), Catch::Contains("2 priorities for graph"));
    urgent.priorities = {1, 0, kMaxPriority + 1};
    CHECK_THAT(error_of(g, urgent), Catch::Contains("has priority 4"));
}

TEST_CASE("flat_stages concatenates the blocks in order", "[search][schedule]") {
    Schedule s;
    s.blocks = {{Stage{StageStrategy::Concurrent, {{0}}}, Stage{StageStrategy::Concurrent, {{1}}}},
                {Stage{StageStrategy::Merge, {{2, 3}}}}};
    const auto flat = s.flat_stages();
    REQUIRE(flat.size() == 3);
    CHECK(flat[0] == s.blocks[0][0]);
    CHECK(flat[2] == s.blocks[1][0]);
}
