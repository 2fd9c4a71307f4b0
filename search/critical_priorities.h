// Priority levels (Schedule::priorities) from each op's slack: how much later than it can, an op
// may start without delaying the end of the graph, with each op taking its isolated time and
// only data dependencies ordering them. Ops on or near the critical path get the higher levels,
// so that when kernels compete for SMs the GPU serves first those the graph's end waits for
// (docs/search-log.md, "Critical ops first").
#pragma once

#include <vector>

#include "src/graph.h"
#include "src/schedule.h"
#include "src/stream_program.h"

namespace iostune {

// Per op, its slack in ms (latest start - earliest start) given `op_ms` (one time per op).
std::vector<double> op_slack_ms(const Graph& graph, const std::vector<double>& op_ms);

// Per op, the number of `slack_fractions` f (each in (0, 1], at most kMaxPriority of them) with
// slack <= f x the critical path's length: {0.02} gives level 1 to the ops within 2% of the
// critical path, {0.25, 0.1, 0.02} grades them in three levels. Throws iostune::Error on sizes
// or fractions that do not fit.
std::vector<int> critical_priorities(const Graph& graph, const std::vector<double>& op_ms,
                                     const std::vector<double>& slack_fractions);

// The same levels from the slack on the schedule's own critical path: its launches (its stream
// program, schedule.priorities ignored), each after the launch before it on its lane and the
// launches it waits for (in the staged form, the stage barriers), a launch taking its ops' summed
// time; every op of a launch gets the launch's level. Lane order joins data here, so ops
// that wait on a lane behind critical ones share their level and the levels change along a lane
// only where the path enters or leaves it: fewer hand-overs (priority_handovers) than the data's
// levels make. Throws iostune::Error as critical_priorities does, or when the schedule does not
// fit the graph.
std::vector<int> scheduled_critical_priorities(const Graph& graph, const Schedule& schedule,
                                               const std::vector<double>& op_ms,
                                               const std::vector<double>& slack_fractions);

// How many times a lane's launches change level (Launch::priority): the hand-overs the engine
// makes, each one an event between two of the lane's streams (an edge in a capture).
int priority_handovers(const StreamProgram& program);

}  // namespace iostune
