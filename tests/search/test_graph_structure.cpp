// same_structure / structure_of, and the cached cost model's use of them: the graph key is
// computed once per graph structure instead of once per stage, and never reused for another.
#include <catch2/catch.hpp>

#include <string>

#include "search/cached_cost_model.h"
#include "search/graph_structure.h"
#include "search/in_memory_stage_cache.h"
#include "search/device_profile.h"
#include "search/sim_cost_model.h"
#include "src/model_json.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/search/test_graphs.h"

using namespace iostune;

TEST_CASE("same_structure compares what the fingerprint reads, plus the batch", "[costmodel]") {
    const Graph g = test::inception_like();
    CHECK(same_structure(g, g));
    CHECK(same_structure(g, test::inception_like()));
    CHECK_FALSE(same_structure(g, test::hourglass()));
    CHECK_FALSE(same_structure(g, g.with_batch(2)));

    Graph renamed = g;
    renamed.set_name("other_name");
    CHECK(same_structure(g, renamed));  // names are not structure

    // One attribute, one edge or one cell apart: a different structure, as for fingerprint().
    Graph wider("inception_like", g.input_shape());
    Graph rewired("inception_like", g.input_shape());
    Graph recelled("inception_like", g.input_shape());
    for (const Op& op : g.ops()) {
        OpAttrs attrs = op.attrs;
        if (op.id == 1 && op.kind == OpKind::Conv) {
            ConvAttrs c = op.as<ConvAttrs>();
            c.relu = !c.relu;
            attrs = c;
        }
        wider.add(op.kind, attrs, op.inputs, op.name, op.cell);
        std::vector<int> inputs = op.inputs;
        if (op.id == g.size() - 1 && op.kind == OpKind::Concat) std::swap(inputs[0], inputs[1]);
        rewired.add(op.kind, op.attrs, inputs, op.name, op.cell);
        recelled.add(op.kind, op.attrs, op.inputs, op.name, op.id == 2 ? 5 : op.cell);
    }
    REQUIRE(g.op(1).kind == OpKind::Conv);
    REQUIRE(g.op(g.size() - 1).kind == OpKind::Concat);
    CHECK_FALSE(same_structure(g, wider));
    CHECK(fingerprint(g) != fingerprint(wider));
    CHECK_FALSE(same_structure(g, rewired));
    CHECK_FALSE(same_structure(g, recelled));
    CHECK(fingerprint(g) != fingerprint(recelled));
}

TEST_CASE("structure_of keeps the structure and drops the weights", "[costmodel]") {
    Graph g = build_zoo_model("squeezenet1_1", 1);
    init_random_weights(g, 3);
    REQUIRE(g.weights_state() != WeightsState::Absent);
    const Graph s = structure_of(g);
    CHECK(s.weights_state() == WeightsState::Absent);
    CHECK(same_structure(g, s));
    CHECK(fingerprint(s) == fingerprint(g));
    CHECK(s.name() == g.name());
}

TEST_CASE("cached model: the graph key is computed once per structure", "[costmodel]") {
    InMemoryStageCache cache;
    SimCostModel inner(device_profile("h100"), Precision::Tf32);
    int key_calls = 0;
    CachedCostModel cached(inner, cache, CacheScope{"sim:h100", "tf32"}, [&](const Graph& graph) {
        ++key_calls;
        return fingerprint(graph);
    });
    const Graph a = test::inception_like();
    const Graph b = test::hourglass();
    const Stage first{StageStrategy::Concurrent, {{0}}};
    const Stage second{StageStrategy::Concurrent, {{1}}};

    const std::string key_a = cached.key(a, first).stage;
    for (int i = 0; i < 50; ++i) cached.measure(a, i % 2 ? first : second);
    CHECK(key_calls == 1);
    CHECK(key_a == fingerprint(a) + "|" + stage_signature(first));

    // Another graph gets its own key, and going back is not served the other graph's key.
    CHECK(cached.key(b, first).stage == fingerprint(b) + "|" + stage_signature(first));
    CHECK(cached.key(a, first).stage == key_a);
    CHECK(key_calls == 3);
    CHECK(cached.key(a.with_batch(4), first).batch == 4);
    CHECK(key_calls == 4);

    const nlohmann::json work = cached.work_seconds();
    CHECK(work.contains("cache_lookup_s"));
    CHECK(work.contains("cache_store_s"));
    CHECK(work["cache_lookup_s"].get<double>() >= 0);
}
