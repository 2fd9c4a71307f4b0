// How a schedule runs on the engine's stream lanes: its launches in enqueue order, the lane each
// runs on, and the earlier launches each waits for. The engine launches (and captures) exactly
// this, so the happens-before relation it defines is the one the memory plan and the concurrency
// audit may rely on.
//
// Two forms of one schedule (Schedule::form):
//   staged     every stage is a barrier: the first launch of each group of stage k+1 waits for
//              the last launch of every group of stage k (what IOS's executor does);
//   dataflow   stages only group launches: a launch waits for the launches that produce its
//              inputs, nothing else, so work of the next stage starts as soon as its own inputs
//              are ready instead of when the slowest group of the stage before ends.
// In both, group g of a stage runs its ops in order on one lane and different groups of a stage
// run on different lanes (concurrent convolutions must not share a cuDNN workspace). Staged
// schedules put group g on lane g. Dataflow picks, per group, the lane whose last launch the
// group's data already waits for (so stream order adds no dependency the data does not have),
// else a new lane (up to 8, or the widest stage's groups), else the lane idle the longest (the
// one whose last launch is oldest), so the lanes' order adds as little false ordering as it can.
// A dataflow program's constraints are a subset of the staged program's: it can only run sooner.
// A dataflow schedule's barriers (Schedule::barriers) add, for every launch of a barrier's stage
// and after, a wait for every lane's last launch before the barrier.
//
// A launch's priority (Schedule::priorities) changes which CUDA stream of its lane it is enqueued
// on, never its order on the lane or what it waits for.
//
// Happens-before: launch a happens before launch b when b waits for a, directly or through
// other launches, or both are on one lane and a is earlier. Vector clocks make the test O(1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/graph.h"
#include "src/schedule.h"

namespace iostune {

struct Launch {
    std::vector<int> ops;     // one op, or the ops of a merge stage (one wider convolution)
    bool merge = false;
    int lane = 0;
    int stage = 0;            // flat index of the schedule stage it belongs to
    int group = 0;            // its group within that stage
    std::vector<int> waits;   // earlier launches on other lanes it waits for (none implied)
    int priority = 0;         // the highest Schedule::priorities level of its ops
};

class StreamProgram {
public:
    StreamProgram() = default;
    // Throws iostune::Error if the schedule is not valid for the graph.
    StreamProgram(const Graph& graph, const Schedule& schedule);

    ScheduleForm form() const { return form_; }
    const std::vector<Launch>& launches() const { return launches_; }
    int lane_count() const { return lanes_; }
    // The launch that runs op `id` (for a merged op, the merge's launch).
    int launch_of(int op_id) const { return launch_of_.at(size_t(op_id)); }
    // Whether launch a has finished before launch b starts, in every execution.
    bool happens_before(int a, int b) const;
    // Ops of different launches that may run at the same time: neither happens before the other.
    bool may_overlap(int launch_a, int launch_b) const {
        return launch_a != launch_b && !happens_before(launch_a, launch_b) &&
               !happens_before(launch_b, launch_a);
    }
    // Cross-lane waits in total: the events a captured graph turns into edges.
    int wait_count() const;
    // "launch 12 (op 40 'mixed_6a_3x3', stage 9 group 1, lane 1)": for messages.
    std::string describe(const Graph& graph, int launch) const;

private:
    int pick_lane(const std::vector<int>& needs, const std::vector<bool>& taken) const;
    void add_launch(Launch launch, std::vector<int> needs);

    ScheduleForm form_ = ScheduleForm::Staged;
    std::vector<Launch> launches_;
    std::vector<int> launch_of_;
    // clock_[i][lane]: the latest launch on `lane` that happens before or is launch i (-1: none).
    std::vector<std::vector<int>> clock_;
    std::vector<int> lane_tail_;  // the last launch on each lane so far (-1: none)
    int lanes_ = 0;      // lanes used
    int max_lanes_ = 0;  // lanes the program may use
};

}  // namespace iostune
