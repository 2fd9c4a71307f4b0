// A schedule with its merges pulled out, shared by the CPU audit tests and the [gpu] perturbed
// replays: every kind of merge stage a search may store, on any model.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "src/graph.h"
#include "src/schedule.h"

namespace iostune::test {

// `schedule` with, in each stage, the groups whose first ops may merge (by merge_key: stacked
// convolutions, batched separable convolutions) pulled out into merge stages run just before the
// rest of that stage. *merges counts them by kind.
inline Schedule with_merges(const Graph& graph, Schedule schedule,
                            std::map<MergeKind, int>* merges) {
    for (auto& block : schedule.blocks) {
        std::vector<Stage> stages;
        for (const Stage& stage : block) {
            if (stage.strategy == StageStrategy::Merge) {
                stages.push_back(stage);
                continue;
            }
            std::map<std::string, std::vector<size_t>> by_key;
            for (size_t g = 0; g < stage.groups.size(); ++g)
                if (const auto key = merge_key(graph, stage.groups[g][0])) by_key[*key].push_back(g);
            std::vector<bool> pulled(stage.groups.size(), false);
            for (const auto& [key, groups] : by_key) {
                std::vector<int> ops;
                for (size_t g : groups) ops.push_back(stage.groups[g][0]);
                if (ops.size() < 2 || !can_merge(graph, ops)) continue;
                ++(*merges)[merge_kind(graph, ops)];
                stages.push_back(Stage{StageStrategy::Merge, {ops}});
                for (size_t g : groups) pulled[g] = true;
            }
            Stage rest;
            for (size_t g = 0; g < stage.groups.size(); ++g) {
                std::vector<int> group = stage.groups[g];
                if (pulled[g]) group.erase(group.begin());
                if (!group.empty()) rest.groups.push_back(std::move(group));
            }
            if (!rest.groups.empty()) stages.push_back(std::move(rest));
        }
        block = std::move(stages);
    }
    return schedule;
}

}  // namespace iostune::test
