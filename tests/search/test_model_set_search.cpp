// Searching a model set (model_set.h) as one graph, and its baselines.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "search/baselines.h"
#include "search/ios_search.h"
#include "search/model_set_baselines.h"
#include "search/sim_cost_model.h"
#include "search/device_profile.h"
#include "src/model_set.h"
#include "src/zoo/zoo.h"

using namespace iostune;

namespace {

int members_in(const Graph& set, const Stage& stage) {
    std::set<int> members;
    for (const auto& group : stage.groups)
        for (int id : group) members.insert(set.member_of(id));
    return int(members.size());
}

}  // namespace

TEST_CASE("a set's search mixes models in its stages and merges across them", "[model_set]") {
    const Graph g = build_zoo_model("googlenet", 1);
    const Graph set = combine_models({g, g}, SetInputs::Shared);
    SimCostModel model(device_profile("h100"), Precision::Tf32);
    SearchOptions options;
    options.progress = false;
    const SearchResult result = ios_search(set, model, options);
    REQUIRE_NOTHROW(validate(set, result.schedule));
    bool mixed = false;
    for (const Stage& stage : result.schedule.flat_stages())
        if (members_in(set, stage) > 1) mixed = true;
    CHECK(mixed);
    // Both stems read the shared input with the same convolution: a merge stage may hold them
    // (HiveMind's cross-model fusion), for the search to weigh like any other.
    std::string why;
    CHECK(can_merge(set, {0, g.size()}, &why));
    const Graph separate = combine_models({g, g}, SetInputs::Separate);
    CHECK_FALSE(can_merge(separate, {0, g.size()}, &why));
    // Predicted faster than the members one after another.
    SimCostModel again(device_profile("h100"), Precision::Tf32);
    const SearchResult alone = ios_search(g, again, options);
    CHECK(result.latency_ms < 2 * alone.latency_ms);
}

TEST_CASE("a set's parts are halved per model, keeping the models side by side", "[model_set]") {
    const Graph g = build_zoo_model("googlenet", 1);
    const Graph set = combine_models({g, g, g}, SetInputs::Shared);
    SimCostModel model(device_profile("h100"), Precision::Tf32);
    SearchOptions options;
    options.progress = false;
    options.max_set_part_states = 8;
    const SearchResult result = ios_search(set, model, options);
    REQUIRE_NOTHROW(validate(set, result.schedule));
    int split_blocks = 0;
    for (const BlockSearchStats& b : result.stats.blocks) {
        CHECK(b.states <= 8 * b.parts);  // every part within the bound
        if (b.parts > 1) ++split_blocks;
    }
    CHECK(split_blocks > 0);
    // Halving per model keeps stages that span models even in the smallest parts.
    int mixed = 0;
    for (const Stage& stage : result.schedule.flat_stages())
        if (members_in(set, stage) > 1) ++mixed;
    CHECK(mixed > int(result.schedule.flat_stages().size()) / 2);
    options.max_set_part_states = 1;
    CHECK_THROWS_WITH(ios_search(set, model, options), Catch::Contains("at least 2"));
}

TEST_CASE("the streams and back-to-back baselines of a set", "[model_set][baselines]") {
    const Graph a = build_zoo_model("squeezenet1_1", 1);
    const Graph b = build_zoo_model("googlenet", 1);
    const Graph set = combine_models({a, b}, SetInputs::Separate);

    const Schedule streams = make_baseline("streams", set);
    REQUIRE_NOTHROW(validate(set, streams));
    const auto stages = streams.flat_stages();
    REQUIRE(stages.size() == 1);
    REQUIRE(stages[0].groups.size() == 2);
    CHECK(stages[0].groups[0].size() == size_t(a.size()));
    CHECK(stages[0].groups[1].front() == a.size());

    const Schedule b2b =
        back_to_back_schedule(set, {make_baseline("greedy", a), make_baseline("nimble", b)});
    REQUIRE_NOTHROW(validate(set, b2b));
    const size_t a_stages = make_baseline("greedy", a).flat_stages().size();
    const auto all = b2b.flat_stages();
    CHECK(all.size() == a_stages + make_baseline("nimble", b).flat_stages().size());
    for (size_t i = 0; i < all.size(); ++i) CHECK(members_in(set, all[i]) == 1);
    CHECK(set.member_of(all[a_stages].groups[0][0]) == 1);

    // A member's dataflow schedule runs staged back to back: its source line says so.
    std::vector<std::string> sources;
    const Schedule looked_up = back_to_back_schedule(
        set,
        [&](const GraphMember& m) -> std::optional<MemberSchedule> {
            if (m.name == a.name()) return MemberSchedule{make_baseline("greedy", a), "test"};
            return MemberSchedule{with_form(make_baseline("nimble", b), ScheduleForm::Dataflow),
                                  "test"};
        },
        sources);
    CHECK(looked_up.form == ScheduleForm::Staged);
    REQUIRE(sources.size() == 2);
    CHECK(sources[0] == fmt::format("{}: test", a.name()));
    CHECK_THAT(sources[1], Catch::Contains("dataflow form") && Catch::Contains("runs staged"));

    CHECK_THROWS_WITH(make_baseline("streams", a), Catch::Contains("model set"));
    CHECK_THROWS_WITH(back_to_back_schedule(set, {make_baseline("greedy", a)}),
                      Catch::Contains("1 member schedules"));
    // A member schedule for another model is refused, not renumbered into nonsense.
    CHECK_THROWS(back_to_back_schedule(set, {make_baseline("greedy", b), make_baseline("greedy", a)}));
}
