// The baselines a model set (model_set.h) is measured against, as schedules of the combined
// graph, so they run in one CUDA Graph on the same engine as the co-scheduled set:
//   streams       every model on its own stream, all at once: one stage whose groups are the
//                 members, each running its ops in order (what a user gets by launching each
//                 model from a stream of its own)
//   back-to-back  the members' own schedules (their best stored ones, or any given) one after
//                 another, each in its own form: the set run one model at a time
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/graph.h"
#include "src/schedule.h"

namespace iostune {

// Throws iostune::Error when `set` is not a model set.
Schedule member_streams_schedule(const Graph& set);

// `member_schedules[i]` is a schedule of member i on its own (member_graph(set, i)); each is
// validated against that member, then renumbered into the set's ids. Staged when every member
// is; else dataflow, with barriers that keep each member's own ordering and the models apart.
Schedule back_to_back_schedule(const Graph& set, const std::vector<Schedule>& member_schedules);

// A member's own schedule, found somewhere (its best stored one), and a word on where from.
struct MemberSchedule {
    Schedule schedule;
    std::string source;  // e.g. "schedule #12 (nimble, 0.3120 ms alone)"
};
using MemberScheduleLookup = std::function<std::optional<MemberSchedule>(const GraphMember&)>;

// Back to back with each member's schedule from `lookup`, or its sequential schedule when the
// lookup has none; `sources` gets one line per member saying which.
Schedule back_to_back_schedule(const Graph& set, const MemberScheduleLookup& lookup,
                               std::vector<std::string>& sources);

}  // namespace iostune
