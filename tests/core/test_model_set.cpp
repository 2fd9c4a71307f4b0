// Model sets (src/model_set.h): several models combined into one graph, its key, its JSON, its
// CPU reference, and the super-blocks the search works on.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "src/blocks.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/reference/reference.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/search/test_graphs.h"

using namespace iostune;

namespace {

using test::conv;

// stem -> {b, c} -> add -> conv: two blocks' worth of structure on a small input.
Graph small_model(const std::string& name, int channels, int size) {
    Graph g(name, Shape{1, channels, size, size});
    const int a = g.add(OpKind::Conv, conv(8, 3), {kGraphInput}, "a");
    const int b = g.add(OpKind::Conv, conv(8, 3), {a}, "b");
    const int c = g.add(OpKind::Conv, conv(8, 1), {a}, "c");
    const int d = g.add(OpKind::Add, AddAttrs{}, {b, c}, "d");
    g.add(OpKind::Conv, conv(4, 1), {d}, "e");
    return g;
}

// small_model with a second output: the branch 'c' (op 2) before the last op, as a detector
// backbone returns its FPN levels. Outputs in this order: e, c.
Graph two_output_model(const std::string& name, int channels, int size) {
    Graph g = small_model(name, channels, size);
    g.set_outputs({g.size() - 1, 2});
    return g;
}

}  // namespace

TEST_CASE("a shared-input set: members read the one input, one output each", "[model_set]") {
    const Graph a = small_model("a", 3, 8);
    const Graph set = combine_models({a, a}, SetInputs::Shared);
    CHECK(set.name() == "a+a");
    CHECK(set.input_count() == 1);
    REQUIRE(set.members().size() == 2);
    CHECK(set.size() == 2 * a.size());
    CHECK(set.outputs() == std::vector<int>{a.size() - 1, 2 * a.size() - 1});
    CHECK(set.members()[1].first_op == a.size());
    CHECK(set.op(a.size()).inputs == std::vector<int>{kGraphInput});
    CHECK(set.op(a.size() + 1).inputs == std::vector<int>{a.size()});
    CHECK(set.op(a.size()).name == "m1/a");
    CHECK(set.member_of(0) == 0);
    CHECK(set.member_of(a.size()) == 1);
    CHECK(set_inputs_of(set) == SetInputs::Shared);
    CHECK_FALSE(set_inputs_of(a).has_value());
    // Two copies of one model without weights are two different models (different seeds).
    CHECK(set.params_of(0)[0].values != set.params_of(a.size())[0].values);
}

TEST_CASE("a separate-input set: one input per member, each of its own shape", "[model_set]") {
    const Graph set = combine_models({small_model("a", 3, 8), small_model("b", 5, 6)},
                                     SetInputs::Separate);
    REQUIRE(set.input_count() == 2);
    CHECK(set.input_shape(1) == Shape{1, 5, 6, 6});
    CHECK(set.members()[1].input == graph_input_id(1));
    CHECK(set.op(set.members()[1].first_op).inputs == std::vector<int>{graph_input_id(1)});
    CHECK(set.with_batch(4).input_shape(1) == Shape{4, 5, 6, 6});
    CHECK(set.with_batch(4).members() == set.members());
    CHECK(set_inputs_of(set) == SetInputs::Separate);
}

TEST_CASE("member_graph gives back each model exactly", "[model_set]") {
    Graph a = small_model("a", 3, 8);
    init_random_weights(a, 5);
    const Graph b = build_zoo_model("squeezenet1_1", 1);
    const Graph set = combine_models({a, b}, SetInputs::Separate);
    const Graph a2 = member_graph(set, 0);
    const Graph b2 = member_graph(set, 1);
    CHECK(fingerprint(a2) == fingerprint(a));
    CHECK(fingerprint(b2) == fingerprint(b));
    CHECK(set.members()[1].fingerprint == fingerprint(b));
    CHECK(a2.op(1).name == "b");
    // Weights given are kept; a member without weights gets seed 1 + its index.
    CHECK(a2.params_of(0)[0].values == a.params_of(0)[0].values);
    Graph b_seeded = b;
    init_random_weights(b_seeded, 2);
    CHECK(b2.params_of(0)[0].values == b_seeded.params_of(0)[0].values);
    CHECK_THROWS_WITH(member_graph(set, 2), Catch::Contains("no member 2"));
}

TEST_CASE("bad sets are refused with the reason", "[model_set]") {
    const Graph a = small_model("a", 3, 8);
    CHECK_THROWS_WITH(combine_models({a}, SetInputs::Shared), Catch::Contains("at least two"));
    CHECK_THROWS_WITH(combine_models({a, small_model("b", 3, 6)}, SetInputs::Shared),
                      Catch::Contains("--shared-input needs one input shape"));
    CHECK_THROWS_WITH(combine_models({a, a.with_batch(2)}, SetInputs::Separate),
                      Catch::Contains("batch 2"));
    const Graph set = combine_models({a, a}, SetInputs::Shared);
    CHECK_THROWS_WITH(combine_models({set, a}, SetInputs::Shared),
                      Catch::Contains("is a model set itself"));
}

TEST_CASE("a set's key: its members' fingerprints in order and the input mode", "[model_set]") {
    const Graph a = small_model("a", 3, 8);
    const Graph b = small_model("b", 3, 8).with_batch(1);
    Graph c = small_model("c", 3, 8);
    c.add(OpKind::Relu, ReluAttrs{}, {c.size() - 1}, "extra");
    const std::string ac = fingerprint(combine_models({a, c}, SetInputs::Shared));
    CHECK(ac == fingerprint(combine_models({b, c}, SetInputs::Shared)));  // names: not in it
    CHECK(ac == fingerprint(combine_models({a, c}, SetInputs::Shared, 99)));  // nor weights
    CHECK(ac != fingerprint(combine_models({c, a}, SetInputs::Shared)));      // order is
    CHECK(ac != fingerprint(combine_models({a, c}, SetInputs::Separate)));    // so is the mode
    CHECK(ac != fingerprint(a));
}

TEST_CASE("a set's model JSON round-trips inputs, outputs and members", "[model_set]") {
    const Graph set = combine_models({small_model("a", 3, 8), small_model("b", 5, 6)},
                                     SetInputs::Separate);
    const nlohmann::json doc = graph_to_json(set);
    CHECK(doc.contains("extra_inputs"));
    const Graph back = graph_from_json(doc, "set.json");
    CHECK(back.input_count() == 2);
    CHECK(back.outputs() == set.outputs());
    CHECK(back.members() == set.members());
    CHECK(fingerprint(back) == fingerprint(set));
    nlohmann::json bad = doc;
    bad["members"][1]["first_op"] = 1;
    CHECK_THROWS_WITH(graph_from_json(bad, "bad.json"), Catch::Contains("members"));
    // A single model's JSON is unchanged: no new fields.
    const nlohmann::json single = graph_to_json(small_model("a", 3, 8));
    CHECK_FALSE(single.contains("extra_inputs"));
    CHECK_FALSE(single.contains("outputs"));
    CHECK_FALSE(single.contains("members"));
}

TEST_CASE("the CPU reference of a set is each model's own", "[model_set]") {
    const Graph set = combine_models({small_model("a", 3, 8), small_model("b", 5, 6)},
                                     SetInputs::Separate);
    const HostTensor x0 = random_input(set.input_shape(0), 3);
    const HostTensor x1 = random_input(set.input_shape(1), 4);
    const std::vector<HostTensor> outs = reference_run_outputs(set, {x0, x1});
    REQUIRE(outs.size() == 2);
    CHECK(outs[0].data == reference_run(member_graph(set, 0), x0).data);
    CHECK(outs[1].data == reference_run(member_graph(set, 1), x1).data);
    CHECK_THROWS_WITH(reference_run_outputs(set, {x0}), Catch::Contains("2 input(s)"));
}

TEST_CASE("a set's blocks align its members by latency", "[model_set][blocks]") {
    const Graph r = build_zoo_model("resnet50", 1);
    const size_t alone = partition_blocks(r).size();
    const Graph set = combine_models({r, r, r}, SetInputs::Shared);
    const auto blocks = partition_blocks(set);
    // Identical members advance in lockstep: super-block j holds block j of each.
    REQUIRE(blocks.size() == alone);
    std::vector<int> seen(size_t(set.size()), 0);
    for (const Block& block : blocks) {
        CHECK(std::is_sorted(block.ops.begin(), block.ops.end()));
        std::set<int> members;
        for (int id : block.ops) {
            ++seen[size_t(id)];
            members.insert(set.member_of(id));
        }
        CHECK(members.size() == 3);
        CHECK(block.ops.size() % 3 == 0);
        CHECK(set.op(block.ops[block.ops.size() / 3]).name ==
              "m1/" + set.op(block.ops[0]).name.substr(3));
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));

    // Two different models are spread over each other's time: the one with more blocks paces,
    // and the other's blocks fall where their middles are (by the latency given).
    const Graph squeeze = build_zoo_model("squeezenet1_1", 1);
    const Graph mixed = combine_models({squeeze, r}, SetInputs::Shared);
    const auto mixed_blocks = partition_blocks(mixed, [](int) { return 1.0; });
    CHECK(mixed_blocks.size() == std::max(alone, partition_blocks(squeeze).size()));
    const auto both = std::count_if(mixed_blocks.begin(), mixed_blocks.end(), [&](const Block& b) {
        return mixed.member_of(b.ops.front()) != mixed.member_of(b.ops.back());
    });
    CHECK(both >= std::ptrdiff_t(mixed_blocks.size()) * 3 / 4);
    // Every block is closed under the members' own order: a member's ops are a contiguous range.
    for (const Block& b : mixed_blocks) {
        for (size_t i = 1; i < b.ops.size(); ++i)
            if (mixed.member_of(b.ops[i]) == mixed.member_of(b.ops[i - 1]))
                CHECK(b.ops[i] == b.ops[i - 1] + 1);
    }
}

TEST_CASE("a set of multi-output models returns every output, member after member",
          "[model_set][outputs]") {
    const Graph a = two_output_model("a", 3, 8);  // outputs: op 4, op 2
    const Graph b = small_model("b", 5, 6);       // output: its last op
    const Graph set = combine_models({a, b, a}, SetInputs::Separate);
    const int n = a.size();  // a and b have the same op count
    REQUIRE(set.members().size() == 3);
    CHECK(set.members()[0].outputs == std::vector<int>{4, 2});
    CHECK(set.members()[1].outputs == std::vector<int>{2 * n - 1});
    CHECK(set.members()[2].outputs == std::vector<int>{2 * n + 4, 2 * n + 2});
    CHECK(set.outputs() == std::vector<int>{4, 2, 2 * n - 1, 2 * n + 4, 2 * n + 2});

    // Graph output k <-> (model, its output j), both ways.
    const std::vector<GraphOutput> origins = output_origins(set);
    CHECK(origins == std::vector<GraphOutput>{{4, 0, 0},
                                              {2, 0, 1},
                                              {2 * n - 1, 1, 0},
                                              {2 * n + 4, 2, 0},
                                              {2 * n + 2, 2, 1}});
    for (size_t k = 0; k < origins.size(); ++k)
        CHECK(output_index(set, origins[k].member, origins[k].member_output) == int(k));
    CHECK_THROWS_WITH(output_index(set, 1, 1),
                      Catch::Contains("model 1 of 'a+b+a' has 1 output(s); there is no output 1"));
    CHECK_THROWS_WITH(output_index(set, 3, 0), Catch::Contains("there is no model 3"));
    CHECK(describe_output(set, 4) == "output 4 ('m2/c', output 1 of model 2 'a')");
    CHECK_THROWS_WITH(describe_output(set, 5), Catch::Contains("has 5 output(s)"));

    // Each member comes back with its own outputs, in its own order.
    const Graph a2 = member_graph(set, 2);
    CHECK(a2.outputs() == a.outputs());
    CHECK(fingerprint(a2) == fingerprint(a));
    CHECK(member_graph(set, 1).outputs() == b.outputs());

    // The CPU reference of the set is each member's own outputs, in the set's order.
    const std::vector<HostTensor> inputs = {random_input(set.input_shape(0), 3),
                                            random_input(set.input_shape(1), 4),
                                            random_input(set.input_shape(2), 5)};
    const std::vector<HostTensor> outs = reference_run_outputs(set, inputs);
    REQUIRE(outs.size() == 5);
    for (size_t k = 0; k < origins.size(); ++k) {
        const int m = origins[k].member;
        const std::vector<HostTensor> alone =
            reference_run_outputs(member_graph(set, m), {inputs[size_t(m)]});
        CHECK(outs[k].data == alone[size_t(origins[k].member_output)].data);
    }
}

TEST_CASE("one model with several outputs: outputs enumerated in graph order",
          "[model_set][outputs]") {
    const Graph a = two_output_model("a", 3, 8);
    CHECK(output_origins(a) == std::vector<GraphOutput>{{4, 0, 0}, {2, 0, 1}});
    CHECK(output_index(a, 0, 1) == 1);
    CHECK_THROWS_WITH(output_index(a, 1, 0), Catch::Contains("'a' has 1 model(s)"));
    CHECK(describe_output(a, 1) == "output 1 ('c')");
    const Graph single = small_model("s", 3, 8);
    CHECK(output_origins(single) == std::vector<GraphOutput>{{single.size() - 1, 0, 0}});
}

TEST_CASE("a set of multi-output models: JSON, fusion and bad member outputs",
          "[model_set][outputs]") {
    const Graph set =
        combine_models({two_output_model("a", 3, 8), small_model("b", 3, 8)}, SetInputs::Shared);
    const nlohmann::json doc = graph_to_json(set);
    CHECK(doc["members"][0]["outputs"] == nlohmann::json{4, 2});
    const Graph back = graph_from_json(doc, "set.json");
    CHECK(back.members() == set.members());
    CHECK(back.outputs() == set.outputs());
    CHECK(fingerprint(back) == fingerprint(set));

    // Files written when a member had one output name it as "output".
    nlohmann::json legacy = graph_to_json(combine_models(
        {small_model("a", 3, 8), small_model("b", 3, 8)}, SetInputs::Shared));
    for (auto& m : legacy["members"]) {
        m["output"] = m["outputs"][0];
        m.erase("outputs");
    }
    CHECK(graph_from_json(legacy, "legacy.json").members()[1].outputs ==
          std::vector<int>{2 * small_model("b", 3, 8).size() - 1});
    nlohmann::json both = doc;
    both["members"][0]["output"] = 4;
    CHECK_THROWS_WITH(graph_from_json(both, "both.json"), Catch::Contains("members[0]"));

    // The graph's outputs must be the members' outputs in member order.
    nlohmann::json swapped = doc;
    swapped["outputs"] = nlohmann::json{2, 4, set.outputs().back()};
    CHECK_THROWS_WITH(graph_from_json(swapped, "swapped.json"),
                      Catch::Contains("not its members' outputs in member order"));
    nlohmann::json outside = doc;
    outside["members"][0]["outputs"] = nlohmann::json{4, set.outputs().back()};
    CHECK_THROWS_WITH(graph_from_json(outside, "outside.json"),
                      Catch::Contains("does not tile"));
}

