#include "src/stream_program.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"

namespace iostune {

namespace {

size_t widest_stage(const std::vector<Stage>& stages) {
    size_t widest = 1;
    for (const Stage& s : stages) widest = std::max(widest, s.groups.size());
    return widest;
}

// Lanes a dataflow program may open beyond its widest stage's, so that work of consecutive
// stages that shares no data (two models of a set, two branches staged one after the other)
// need not queue behind each other on one lane. Each lane holds a cuDNN handle and workspace.
constexpr size_t kDataflowLanes = 8;

}  // namespace

StreamProgram::StreamProgram(const Graph& graph, const Schedule& schedule)
    : form_(schedule.form) {
    validate(graph, schedule);
    const std::vector<Stage> stages = schedule.flat_stages();
    const size_t widest = widest_stage(stages);
    max_lanes_ = int(form_ == ScheduleForm::Staged ? widest : std::max(widest, kDataflowLanes));
    lanes_ = form_ == ScheduleForm::Staged ? max_lanes_ : 0;  // dataflow opens lanes on demand
    lane_tail_.assign(size_t(max_lanes_), -1);
    launch_of_.assign(size_t(graph.size()), -1);

    // The launches that produce what `ops` read from outside themselves.
    const auto producers = [&](const std::vector<int>& ops) {
        std::vector<int> needs;
        for (int id : ops)
            for (int src : graph.op(id).inputs)
                if (!is_graph_input(src) &&
                    std::find(ops.begin(), ops.end(), src) == ops.end())
                    needs.push_back(launch_of_[size_t(src)]);
        return needs;
    };

    std::vector<int> previous_tails;  // the last launch of each group of the stage before
    std::vector<int> barrier_tails;   // every lane's last launch at the latest barrier
    size_t next_barrier = 0;
    for (size_t s = 0; s < stages.size(); ++s) {
        const Stage& stage = stages[s];
        if (next_barrier < schedule.barriers.size() && schedule.barriers[next_barrier] == int(s)) {
            ++next_barrier;
            barrier_tails.clear();
            for (int tail : lane_tail_)
                if (tail >= 0) barrier_tails.push_back(tail);
        }
        // What every launch from here on waits for besides its data (add_launch drops what
        // stream order or another wait already implies).
        const auto with_barrier = [&](std::vector<int> needs) {
            needs.insert(needs.end(), barrier_tails.begin(), barrier_tails.end());
            return needs;
        };
        std::vector<bool> taken(size_t(max_lanes_), false);
        std::vector<int> tails;
        for (size_t g = 0; g < stage.groups.size(); ++g) {
            const std::vector<int>& group = stage.groups[g];
            const bool merge = stage.strategy == StageStrategy::Merge;
            std::vector<int> first_needs = producers(merge ? group : std::vector<int>{group[0]});
            const int lane = form_ == ScheduleForm::Staged ? int(g) : pick_lane(first_needs, taken);
            taken[size_t(lane)] = true;
            lanes_ = std::max(lanes_, lane + 1);
            if (form_ == ScheduleForm::Staged)
                first_needs.insert(first_needs.end(), previous_tails.begin(), previous_tails.end());
            if (merge) {
                add_launch({group, true, lane, int(s), int(g), {}}, with_barrier(first_needs));
            } else {
                for (size_t i = 0; i < group.size(); ++i)
                    add_launch({{group[i]}, false, lane, int(s), int(g), {}},
                               with_barrier(i == 0 ? first_needs : producers({group[i]})));
            }
            tails.push_back(int(launches_.size()) - 1);
        }
        previous_tails = std::move(tails);
    }
    for (Launch& launch : launches_)
        for (int id : launch.ops) launch.priority = std::max(launch.priority, priority_of(schedule, id));
}

// See the file comment: a lane whose last launch the data already waits for (best: a direct
// producer, so the chain stays on one lane), else a new lane, else the lane of the oldest tail.
int StreamProgram::pick_lane(const std::vector<int>& needs, const std::vector<bool>& taken) const {
    int best = -1, best_rank = 0;
    // The lanes in use and one new one (all of them are free from the start).
    const int candidates = std::min(lanes_ + 1, max_lanes_);
    for (int lane = 0; lane < candidates; ++lane) {
        if (taken[size_t(lane)]) continue;
        const int tail = lane_tail_[size_t(lane)];
        int rank;  // lower is better
        if (tail >= 0 && std::find(needs.begin(), needs.end(), tail) != needs.end()) rank = 0;
        else if (tail >= 0 && std::any_of(needs.begin(), needs.end(), [&](int n) {
                     return happens_before(tail, n);
                 }))
            rank = 1;
        else if (tail < 0) rank = 2;
        else rank = 3;
        // Among equals the oldest tail: it has most likely finished.
        if (best < 0 || rank < best_rank ||
            (rank == best_rank && tail < lane_tail_[size_t(best)])) {
            best = lane;
            best_rank = rank;
        }
    }
    if (best < 0) throw Error("stream program: a stage has more groups than lanes (a bug)");
    return best;
}

void StreamProgram::add_launch(Launch launch, std::vector<int> needs) {
    const int index = int(launches_.size());
    const int tail = lane_tail_[size_t(launch.lane)];
    std::vector<int> clock =
        tail >= 0 ? clock_[size_t(tail)] : std::vector<int>(size_t(max_lanes_), -1);
    // Latest first: waiting for a later launch often implies the earlier ones.
    std::sort(needs.begin(), needs.end(), std::greater<>());
    needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
    for (int n : needs) {
        if (clock[size_t(launches_[size_t(n)].lane)] >= n) continue;  // already ordered
        launch.waits.push_back(n);
        for (size_t l = 0; l < clock.size(); ++l) clock[l] = std::max(clock[l], clock_[size_t(n)][l]);
    }
    clock[size_t(launch.lane)] = index;
    for (int id : launch.ops) launch_of_[size_t(id)] = index;
    lane_tail_[size_t(launch.lane)] = index;
    clock_.push_back(std::move(clock));
    launches_.push_back(std::move(launch));
}

bool StreamProgram::happens_before(int a, int b) const {
    return a < b && clock_[size_t(b)][size_t(launches_[size_t(a)].lane)] >= a;
}

int StreamProgram::wait_count() const {
    int waits = 0;
    for (const Launch& l : launches_) waits += int(l.waits.size());
    return waits;
}

std::string StreamProgram::describe(const Graph& graph, int launch) const {
    const Launch& l = launches_.at(size_t(launch));
    const Op& first = graph.op(l.ops.front());
    const std::string ops =
        l.merge ? fmt::format("merge of {} ops from op {} '{}'", l.ops.size(), first.id, first.name)
                : fmt::format("op {} '{}'", first.id, first.name);
    return fmt::format("launch {} ({}, stage {} group {}, lane {})", launch, ops, l.stage, l.group,
                       l.lane);
}

}  // namespace iostune
