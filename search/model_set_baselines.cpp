#include "search/model_set_baselines.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"
#include "src/model_set.h"

namespace iostune {

namespace {

void require_set(const Graph& graph, const char* baseline) {
    if (graph.members().empty())
        throw Error(fmt::format("the '{}' baseline runs the models of a model set; '{}' is one "
                                "model (give --model several times)",
                                baseline, graph.name()));
}

}  // namespace

Schedule member_streams_schedule(const Graph& set) {
    require_set(set, "streams");
    Stage stage{StageStrategy::Concurrent, {}};
    for (const GraphMember& m : set.members()) {
        std::vector<int> ops;
        for (int id = m.first_op; id < m.end_op; ++id) ops.push_back(id);
        stage.groups.push_back(std::move(ops));
    }
    Schedule schedule;
    schedule.blocks.push_back({std::move(stage)});
    return schedule;
}

Schedule back_to_back_schedule(const Graph& set, const std::vector<Schedule>& member_schedules) {
    require_set(set, "back-to-back");
    if (member_schedules.size() != set.members().size())
        throw Error(fmt::format("back-to-back: {} member schedules given for the {} models of '{}'",
                                member_schedules.size(), set.members().size(), set.name()));
    // All staged: one staged schedule. A dataflow member (stages as groupings, call120:
    // GoogLeNet's 75 stages for 81 ops) would run nearly one op at a time staged, so then the
    // whole is dataflow, and barriers give each member its own form: one at each member's
    // first stage (the next model starts when the last one has ended), one at every stage of
    // a staged member (dataflow with a barrier at each stage orders launches as staged does),
    // and a dataflow member's own barriers.
    const bool any_dataflow =
        std::any_of(member_schedules.begin(), member_schedules.end(),
                    [](const Schedule& s) { return s.form == ScheduleForm::Dataflow; });
    Schedule schedule;
    schedule.form = any_dataflow ? ScheduleForm::Dataflow : ScheduleForm::Staged;
    int first_stage = 0;  // the member's first stage in the set's flat order
    for (size_t i = 0; i < member_schedules.size(); ++i) {
        const Schedule& member = member_schedules[i];
        const int offset = set.members()[i].first_op;
        validate(member_graph(set, int(i)).with_batch(set.batch()), member);
        for (const auto& block : member.blocks) {
            std::vector<Stage> stages = block;
            for (Stage& stage : stages)
                for (auto& group : stage.groups)
                    for (int& id : group) id += offset;
            schedule.blocks.push_back(std::move(stages));
        }
        const int stages = int(member.flat_stages().size());
        if (any_dataflow) {
            if (first_stage > 0) schedule.barriers.push_back(first_stage);
            if (member.form == ScheduleForm::Staged)
                for (int s = 1; s < stages; ++s) schedule.barriers.push_back(first_stage + s);
            for (int at : member.barriers) schedule.barriers.push_back(first_stage + at);
        }
        // Each member's priorities too: the baseline is what the member runs alone.
        if (!member.priorities.empty()) {
            schedule.priorities.resize(size_t(set.size()), 0);
            std::copy(member.priorities.begin(), member.priorities.end(),
                      schedule.priorities.begin() + offset);
        }
        first_stage += stages;
    }
    return schedule;
}

Schedule back_to_back_schedule(const Graph& set, const MemberScheduleLookup& lookup,
                               std::vector<std::string>& sources) {
    require_set(set, "back-to-back");
    std::vector<Schedule> schedules;
    for (size_t i = 0; i < set.members().size(); ++i) {
        const GraphMember& m = set.members()[i];
        if (std::optional<MemberSchedule> found = lookup(m)) {
            schedules.push_back(std::move(found->schedule));
            sources.push_back(fmt::format("{}: {}", m.name, found->source));
        } else {
            schedules.push_back(sequential_schedule(member_graph(set, int(i))));
            sources.push_back(fmt::format("{}: sequential (no schedule stored for it; search it "
                                          "alone first for a stronger baseline)",
                                          m.name));
        }
    }
    return back_to_back_schedule(set, schedules);
}

}  // namespace iostune
