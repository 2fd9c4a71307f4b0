#include "search/critical_priorities.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"
#include "src/schedule.h"

namespace iostune {

namespace {

struct Slack {
    std::vector<double> per_op;  // ms
    double length = 0;           // the critical path's, ms
};

Slack slack_of(const Graph& graph, const std::vector<double>& op_ms) {
    const size_t n = size_t(graph.size());
    if (op_ms.size() != n)
        throw Error(fmt::format("{} op times for graph '{}' of {} ops", op_ms.size(), graph.name(),
                                n));
    // Ops are in topological order (graph.h): earliest starts forward, latest finishes back.
    Slack result;
    std::vector<double> earliest(n, 0.0);
    for (const Op& op : graph.ops()) {
        for (int src : op.inputs)
            if (!is_graph_input(src))
                earliest[size_t(op.id)] =
                    std::max(earliest[size_t(op.id)], earliest[size_t(src)] + op_ms[size_t(src)]);
        result.length = std::max(result.length, earliest[size_t(op.id)] + op_ms[size_t(op.id)]);
    }
    std::vector<double> latest_finish(n, result.length);
    for (size_t k = n; k-- > 0;)
        for (int src : graph.op(int(k)).inputs)
            if (!is_graph_input(src))
                latest_finish[size_t(src)] =
                    std::min(latest_finish[size_t(src)], latest_finish[k] - op_ms[k]);
    result.per_op.resize(n);
    for (size_t k = 0; k < n; ++k)
        result.per_op[k] = std::max(0.0, latest_finish[k] - op_ms[k] - earliest[k]);
    return result;
}

}  // namespace

std::vector<double> op_slack_ms(const Graph& graph, const std::vector<double>& op_ms) {
    return slack_of(graph, op_ms).per_op;
}

std::vector<int> critical_priorities(const Graph& graph, const std::vector<double>& op_ms,
                                     const std::vector<double>& slack_fractions) {
    if (slack_fractions.size() > size_t(kMaxPriority))
        throw Error(fmt::format("{} priority levels asked for; at most {}", slack_fractions.size(),
                                kMaxPriority));
    for (double f : slack_fractions)
        if (!(f > 0 && f <= 1)) throw Error(fmt::format("slack fraction {} is not in (0, 1]", f));
    const Slack slack = slack_of(graph, op_ms);
    std::vector<int> levels(op_ms.size(), 0);
    for (size_t k = 0; k < levels.size(); ++k)
        for (double f : slack_fractions)
            if (slack.per_op[k] <= f * slack.length) ++levels[k];
    return levels;
}

}  // namespace iostune
