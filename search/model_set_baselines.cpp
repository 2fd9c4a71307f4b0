#include "search/model_set_baselines.h"

#include <fmt/format.h>

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
    Schedule schedule;
    for (size_t i = 0; i < member_schedules.size(); ++i) {
        const int offset = set.members()[i].first_op;
        validate(member_graph(set, int(i)).with_batch(set.batch()), member_schedules[i]);
        for (const auto& block : member_schedules[i].blocks) {
            std::vector<Stage> stages = block;
            for (Stage& stage : stages)
                for (auto& group : stage.groups)
                    for (int& id : group) id += offset;
            schedule.blocks.push_back(std::move(stages));
        }
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
            // Back to back is one schedule, staged; a member's dataflow schedule (stages as
            // groupings, call120: GoogLeNet's 75 stages for 81 ops) runs with a barrier after
            // every stage there, nearly one op at a time, and the baseline is slower than the
            // member alone.
            const bool dataflow = found->schedule.form == ScheduleForm::Dataflow;
            schedules.push_back(std::move(found->schedule));
            sources.push_back(fmt::format(
                "{}: {}{}", m.name, found->source,
                dataflow ? "; warning: that schedule is in dataflow form, which back to back "
                           "runs staged, so this baseline is slower than the member alone "
                           "(compare the set with the members' own replays instead)"
                         : ""));
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
