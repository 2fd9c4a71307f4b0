// Searching a model set (model_set.h) as one graph, and its baselines.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
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
#include "src/stream_program.h"
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
    CHECK(b2b.priorities.empty());

    // A member's priority levels stay its ops' (renumbered); the other member's are 0.
    Schedule b_urgent = make_baseline("nimble", b);
    for (int id = 0; id < b.size(); ++id) b_urgent.priorities.push_back(1 + id % 3);
    const Schedule b2b_urgent = back_to_back_schedule(set, {make_baseline("greedy", a), b_urgent});
    REQUIRE_NOTHROW(validate(set, b2b_urgent));
    REQUIRE(b2b_urgent.priorities.size() == size_t(set.size()));
    for (int id = 0; id < set.size(); ++id)
        CHECK(b2b_urgent.priorities[size_t(id)] ==
              (id < a.size() ? 0 : b_urgent.priorities[size_t(id - a.size())]));

    // Looked up: each member's source line.
    std::vector<std::string> sources;
    const Schedule looked_up = back_to_back_schedule(
        set,
        [&](const GraphMember& m) -> std::optional<MemberSchedule> {
            if (m.name == a.name()) return MemberSchedule{make_baseline("greedy", a), "test"};
            return std::nullopt;
        },
        sources);
    CHECK(looked_up.form == ScheduleForm::Staged);  // all members staged: staged
    REQUIRE(sources.size() == 2);
    CHECK(sources[0] == fmt::format("{}: test", a.name()));
    CHECK_THAT(sources[1], Catch::Contains("sequential"));

    CHECK_THROWS_WITH(make_baseline("streams", a), Catch::Contains("model set"));
    CHECK_THROWS_WITH(back_to_back_schedule(set, {make_baseline("greedy", a)}),
                      Catch::Contains("1 member schedules"));
    // A member schedule for another model is refused, not renumbered into nonsense.
    CHECK_THROWS(back_to_back_schedule(set, {make_baseline("greedy", b), make_baseline("greedy", a)}));
}

namespace {

// Every two ops of `member` are ordered alike in its program alone and in the set's (where its
// ids start at `offset`): one launch before the other in one exactly when in the other.
void check_same_order(const Graph& member, const StreamProgram& alone, const StreamProgram& in_set,
                      int offset) {
    for (int x = 0; x < member.size(); ++x)
        for (int y = 0; y < member.size(); ++y) {
            const int ax = alone.launch_of(x), ay = alone.launch_of(y);
            const int sx = in_set.launch_of(x + offset), sy = in_set.launch_of(y + offset);
            if (ax == ay) continue;
            INFO("ops " << x << " and " << y << " of " << member.name());
            REQUIRE(alone.happens_before(ax, ay) == in_set.happens_before(sx, sy));
        }
}

}  // namespace

TEST_CASE("back to back runs each member in its own form, one model after the other",
          "[model_set][baselines]") {
    const Graph a = build_zoo_model("googlenet", 1);
    const Graph b = build_zoo_model("squeezenet1_1", 1);
    const Graph c = build_zoo_model("inception_v3", 1);
    const Graph set = combine_models({a, b, c}, SetInputs::Separate);
    // call120's case: a member's best is a dataflow schedule; staged members beside it.
    const Schedule a_own = with_form(make_baseline("greedy", a), ScheduleForm::Dataflow);
    const Schedule b_own = make_baseline("nimble", b);
    const Schedule c_own = make_baseline("greedy", c);
    const Schedule b2b = back_to_back_schedule(set, {a_own, b_own, c_own});
    REQUIRE_NOTHROW(validate(set, b2b));
    CHECK(b2b.form == ScheduleForm::Dataflow);
    CHECK_FALSE(b2b.barriers.empty());

    // Inside each member, launches are ordered exactly as the member alone orders them: the
    // dataflow member keeps its freedom, a staged member its barriers.
    const StreamProgram in_set(set, b2b);
    const std::vector<std::pair<const Graph*, const Schedule*>> members = {
        {&a, &a_own}, {&b, &b_own}, {&c, &c_own}};
    for (size_t m = 0; m < members.size(); ++m) {
        const auto& [graph, own] = members[m];
        check_same_order(*graph, StreamProgram(*graph, *own), in_set, set.members()[m].first_op);
    }
    // One model after the other: every launch of a member before every launch of the next.
    for (size_t m = 0; m + 1 < members.size(); ++m) {
        const GraphMember& now = set.members()[m];
        const GraphMember& next = set.members()[m + 1];
        for (int x = now.first_op; x < now.end_op; ++x)
            for (int y = next.first_op; y < next.end_op; ++y)
                REQUIRE(in_set.happens_before(in_set.launch_of(x), in_set.launch_of(y)));
    }

    // A dataflow member's own barriers (a memory limit's) come along, shifted to its stages.
    Schedule c_flow = with_form(c_own, ScheduleForm::Dataflow);
    c_flow.barriers = {3};
    const Schedule shifted = back_to_back_schedule(set, {a_own, b_own, c_flow});
    REQUIRE_NOTHROW(validate(set, shifted));
    const int c_first = int(a_own.flat_stages().size() + b_own.flat_stages().size());
    CHECK(std::count(shifted.barriers.begin(), shifted.barriers.end(), c_first + 3) == 1);
    check_same_order(c, StreamProgram(c, c_flow), StreamProgram(set, shifted),
                     set.members()[2].first_op);
}
