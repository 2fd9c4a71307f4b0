#include "search/stream_assignment.h"

#include <fmt/format.h>

#include <algorithm>

#include "search/block_dag.h"
#include "src/error.h"

namespace iostune {

std::vector<Stage> stages_from_streams(const Graph& graph, const std::vector<int>& block_ops,
                                       const std::vector<std::vector<int>>& streams,
                                       const std::vector<int>& launch_rank) {
    const BlockDag dag = BlockDag::of(graph, block_ops);
    std::vector<int> stream_of(size_t(dag.size()), -1);
    for (size_t s = 0; s < streams.size(); ++s)
        for (int op : streams[s]) {
            const int u = dag.local(op);
            if (stream_of[size_t(u)] >= 0)
                throw Error(fmt::format("op {} is on two streams ({} and {})", op,
                                        stream_of[size_t(u)], s));
            stream_of[size_t(u)] = int(s);
        }
    for (int u = 0; u < dag.size(); ++u)
        if (stream_of[size_t(u)] < 0)
            throw Error(fmt::format("op {} of the block is on no stream", dag.ops[size_t(u)]));

    const auto rank = [&](int op) { return launch_rank.empty() ? op : launch_rank.at(size_t(op)); };
    std::vector<bool> done(size_t(dag.size()), false);
    std::vector<size_t> next(streams.size(), 0);
    int remaining = dag.size();
    std::vector<Stage> stages;
    while (remaining > 0) {
        Stage stage;
        std::vector<int> taken;
        for (size_t s = 0; s < streams.size(); ++s) {
            std::vector<int> run;
            for (size_t i = next[s]; i < streams[s].size(); ++i) {
                const int u = dag.local(streams[s][i]);
                // Ready: every producer finished in an earlier stage, or earlier in this run
                // (same stream, so run in order).
                const bool ready = std::all_of(
                    dag.preds[size_t(u)].begin(), dag.preds[size_t(u)].end(), [&](int p) {
                        return done[size_t(p)] ||
                               std::find(run.begin(), run.end(), dag.ops[size_t(p)]) != run.end();
                    });
                if (!ready) break;
                run.push_back(streams[s][i]);
            }
            next[s] += run.size();
            if (!run.empty()) stage.groups.push_back(std::move(run));
        }
        if (stage.groups.empty())
            throw Error("stream assignment cannot make progress: a stream runs an op before one "
                        "of its producers");
        std::stable_sort(stage.groups.begin(), stage.groups.end(),
                         [&](const auto& a, const auto& b) { return rank(a.front()) < rank(b.front()); });
        for (const auto& group : stage.groups)
            for (int op : group) {
                done[size_t(dag.local(op))] = true;
                --remaining;
            }
        stages.push_back(std::move(stage));
    }
    return stages;
}

}  // namespace iostune
