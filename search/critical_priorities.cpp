#include "search/critical_priorities.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"
#include "src/schedule.h"
#include "src/stream_program.h"

namespace iostune {

namespace {

// A DAG in topological order: each node's predecessors (earlier nodes) and its time.
struct Dag {
    std::vector<std::vector<int>> preds;
    std::vector<double> ms;
};

struct Slack {
    std::vector<double> per_node;  // ms
    double length = 0;             // the critical path's, ms
};

Slack slack_of(const Dag& dag) {
    const size_t n = dag.ms.size();
    Slack result;
    std::vector<double> earliest(n, 0.0);
    for (size_t k = 0; k < n; ++k) {
        for (int p : dag.preds[k])
            earliest[k] = std::max(earliest[k], earliest[size_t(p)] + dag.ms[size_t(p)]);
        result.length = std::max(result.length, earliest[k] + dag.ms[k]);
    }
    std::vector<double> latest_finish(n, result.length);
    for (size_t k = n; k-- > 0;)
        for (int p : dag.preds[k])
            latest_finish[size_t(p)] =
                std::min(latest_finish[size_t(p)], latest_finish[k] - dag.ms[k]);
    result.per_node.resize(n);
    for (size_t k = 0; k < n; ++k)
        result.per_node[k] = std::max(0.0, latest_finish[k] - dag.ms[k] - earliest[k]);
    return result;
}

void check_op_times(const Graph& graph, const std::vector<double>& op_ms) {
    if (op_ms.size() != size_t(graph.size()))
        throw Error(fmt::format("{} op times for graph '{}' of {} ops", op_ms.size(), graph.name(),
                                graph.size()));
}

// Ops are in topological order (graph.h); only data orders them.
Dag data_dag(const Graph& graph, const std::vector<double>& op_ms) {
    check_op_times(graph, op_ms);
    Dag dag{std::vector<std::vector<int>>(op_ms.size()), op_ms};
    for (const Op& op : graph.ops())
        for (int src : op.inputs)
            if (!is_graph_input(src)) dag.preds[size_t(op.id)].push_back(src);
    return dag;
}

// The schedule's launches in enqueue order (topological), each after the launch before it on its
// lane and the launches it waits for; a launch takes the sum of its ops' times.
Dag launch_dag(const Graph& graph, const StreamProgram& program, const std::vector<double>& op_ms) {
    check_op_times(graph, op_ms);
    const std::vector<Launch>& launches = program.launches();
    Dag dag{std::vector<std::vector<int>>(launches.size()), std::vector<double>(launches.size())};
    std::vector<int> lane_tail(size_t(program.lane_count()), -1);
    for (size_t k = 0; k < launches.size(); ++k) {
        const Launch& l = launches[k];
        dag.preds[k] = l.waits;
        if (lane_tail[size_t(l.lane)] >= 0) dag.preds[k].push_back(lane_tail[size_t(l.lane)]);
        lane_tail[size_t(l.lane)] = int(k);
        for (int op : l.ops) dag.ms[k] += op_ms[size_t(op)];
    }
    return dag;
}

void check_fractions(const std::vector<double>& slack_fractions) {
    if (slack_fractions.size() > size_t(kMaxPriority))
        throw Error(fmt::format("{} priority levels asked for; at most {}", slack_fractions.size(),
                                kMaxPriority));
    for (double f : slack_fractions)
        if (!(f > 0 && f <= 1)) throw Error(fmt::format("slack fraction {} is not in (0, 1]", f));
}

// Per node, how many of `slack_fractions` f have slack <= f x the critical path's length.
std::vector<int> levels_of(const Dag& dag, const std::vector<double>& slack_fractions) {
    check_fractions(slack_fractions);
    const Slack slack = slack_of(dag);
    std::vector<int> levels(dag.ms.size(), 0);
    for (size_t k = 0; k < levels.size(); ++k)
        for (double f : slack_fractions)
            if (slack.per_node[k] <= f * slack.length) ++levels[k];
    return levels;
}

}  // namespace

std::vector<double> op_slack_ms(const Graph& graph, const std::vector<double>& op_ms) {
    return slack_of(data_dag(graph, op_ms)).per_node;
}

std::vector<int> critical_priorities(const Graph& graph, const std::vector<double>& op_ms,
                                     const std::vector<double>& slack_fractions) {
    return levels_of(data_dag(graph, op_ms), slack_fractions);
}

std::vector<int> scheduled_critical_priorities(const Graph& graph, const Schedule& schedule,
                                               const std::vector<double>& op_ms,
                                               const std::vector<double>& slack_fractions) {
    Schedule plain = schedule;
    plain.priorities.clear();
    const StreamProgram program(graph, plain);
    const std::vector<int> launch_levels =
        levels_of(launch_dag(graph, program, op_ms), slack_fractions);
    std::vector<int> levels(op_ms.size(), 0);
    for (int op = 0; op < graph.size(); ++op)
        levels[size_t(op)] = launch_levels[size_t(program.launch_of(op))];
    return levels;
}

int priority_handovers(const StreamProgram& program) {
    std::vector<int> lane_level(size_t(program.lane_count()), -1);
    int handovers = 0;
    for (const Launch& l : program.launches()) {
        int& last = lane_level[size_t(l.lane)];
        if (last >= 0 && last != l.priority) ++handovers;
        last = l.priority;
    }
    return handovers;
}

}  // namespace iostune
