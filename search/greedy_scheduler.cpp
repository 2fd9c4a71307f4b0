#include "search/greedy_scheduler.h"

#include <algorithm>

#include "search/block_dag.h"

namespace iostune {

std::vector<Stage> greedy_block_stages(const Graph& graph, const Block& block) {
    const BlockDag dag = BlockDag::of(graph, block.ops);
    std::vector<int> waiting(size_t(dag.size()));
    for (int u = 0; u < dag.size(); ++u) waiting[size_t(u)] = int(dag.preds[size_t(u)].size());
    std::vector<int> ready;
    for (int u = 0; u < dag.size(); ++u)
        if (waiting[size_t(u)] == 0) ready.push_back(u);

    std::vector<Stage> stages;
    while (!ready.empty()) {
        Stage stage;
        std::vector<int> next;
        for (int u : ready) {
            stage.groups.push_back({dag.ops[size_t(u)]});
            for (int v : dag.succs[size_t(u)])
                if (--waiting[size_t(v)] == 0) next.push_back(v);
        }
        stages.push_back(std::move(stage));
        std::sort(next.begin(), next.end());
        ready = std::move(next);
    }
    return stages;
}

Schedule greedy_schedule(const Graph& graph) {
    Schedule schedule;
    for (const Block& block : partition_blocks(graph))
        schedule.blocks.push_back(greedy_block_stages(graph, block));
    return schedule;
}

}  // namespace iostune
