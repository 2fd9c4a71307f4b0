#include "search/ios_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <chrono>
#include <limits>
#include <unordered_map>
#include <utility>

#include "search/ending_enumerator.h"
#include "search/greedy_scheduler.h"
#include "search/progress_bar.h"
#include "src/blocks.h"
#include "src/error.h"
#include "src/stopwatch.h"

namespace iostune {

const char* to_string(SearchStrategy strategy) {
    switch (strategy) {
        case SearchStrategy::IosBoth: return "ios-both";
        case SearchStrategy::IosParallel: return "ios-parallel";
        case SearchStrategy::IosMerge: return "ios-merge";
    }
    return "unknown";
}

std::optional<SearchStrategy> search_strategy_from_string(const std::string& name) {
    for (auto s : {SearchStrategy::IosBoth, SearchStrategy::IosParallel, SearchStrategy::IosMerge})
        if (name == to_string(s)) return s;
    return std::nullopt;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Stage costs of one search, cached by signature (the graph is fixed within a search).
class StageCoster {
public:
    StageCoster(const Graph& graph, CostModel& model) : graph_(graph), model_(model) {}

    // Latency of the stage, or +inf when the cost model could not run it.
    double cost(const Stage& stage, BlockSearchStats& stats) {
        const std::string key = stage_signature(stage);
        if (auto it = cache_.find(key); it != cache_.end()) {
            ++stats.cache_hits;
            return it->second;
        }
        const StageMeasurement m = model_.measure(graph_, stage);
        ++stats.stages_costed;
        double latency = m.latency_ms;
        if (!m.ok) {
            ++stats.stages_failed;
            if (first_failure_.empty()) first_failure_ = fmt::format("{}: {}", key, m.error);
            latency = kInf;
        }
        cache_.emplace(key, latency);
        return latency;
    }

    const std::string& first_failure() const { return first_failure_; }

private:
    const Graph& graph_;
    CostModel& model_;
    std::unordered_map<std::string, double> cache_;
    std::string first_failure_;
};

std::vector<int> global_ids(const PartDag& dag, uint64_t ops) {
    std::vector<int> ids;
    for (; ops; ops &= ops - 1) ids.push_back(dag.ops[size_t(std::countr_zero(ops))]);
    return ids;
}

Stage concurrent_stage(const PartDag& dag, std::span<const uint64_t> groups) {
    Stage stage{StageStrategy::Concurrent, {}};
    for (uint64_t g : groups) stage.groups.push_back(global_ids(dag, g));
    std::sort(stage.groups.begin(), stage.groups.end());  // canonical: by lowest op id
    return stage;
}

struct OutOfTime {};  // thrown out of a part's DP when the search's deadline passes

// The smallest part bound fitting_part_states() goes down to: windows of a few ops.
constexpr int64_t kMinFittedPartStates = 32;

// The DP over one part of a block.
class PartSearch {
public:
    PartSearch(const Graph& graph, const PartDag& dag, const SearchOptions& options,
               StageCoster& coster, BlockSearchStats& stats, ProgressBar& progress,
               std::optional<SteadyClock::time_point> deadline)
        : graph_(graph), dag_(dag), options_(options), coster_(coster), stats_(stats),
          progress_(progress), deadline_(deadline) {
        if (options.prune) {
            limits_.max_group_ops = options.max_group_ops;
            limits_.max_groups = options.max_groups;
        }
        limits_.single_source_groups = options.reference_endings;
        if (options.strategy == SearchStrategy::IosMerge) limits_.max_group_ops = 1;
    }

    // Fills the stats' state/transition/schedule counts; returns the part's stages in order.
    std::vector<Stage> run(double& latency_ms) {
        const Entry& root = solve(dag_.all());
        stats_.states += int64_t(memo_.size()) + 1;  // + the empty state
        stats_.schedules *= root.schedules;
        latency_ms = root.cost;
        if (root.cost == kInf) return {};
        std::vector<Stage> reversed;
        for (uint64_t s = dag_.all(); s;) {
            const Entry& e = memo_.at(s);
            reversed.push_back(e.stage);
            s &= ~e.ending;
        }
        return {reversed.rbegin(), reversed.rend()};
    }

private:
    struct Entry {
        double cost = kInf;
        double schedules = 0;  // stage sequences that schedule exactly this state
        uint64_t ending = 0;   // the chosen last stage's ops
        Stage stage;
    };

    struct Candidate {
        uint64_t ops;
        std::vector<uint64_t> groups;
    };

    const Entry& solve(uint64_t state) {
        static const Entry empty{0.0, 1.0, 0, {}};
        if (!state) return empty;
        if (auto it = memo_.find(state); it != memo_.end()) return it->second;
        if (deadline_ && SteadyClock::now() > *deadline_) throw OutOfTime{};

        std::vector<Candidate> endings;
        enumerate_endings(dag_, state, limits_, [&](const Ending& e) {
            // A wide state has astronomically many endings: the deadline holds here too.
            if (deadline_ && endings.size() % 4096 == 4095 && SteadyClock::now() > *deadline_)
                throw OutOfTime{};
            endings.push_back({e.ops, {e.groups.begin(), e.groups.end()}});
        });

        Entry best;
        for (const Candidate& c : endings) {
            const bool single = std::popcount(c.ops) == 1;
            const bool concurrent = options_.strategy != SearchStrategy::IosMerge || single;
            const bool merge = options_.strategy != SearchStrategy::IosParallel && !single &&
                               can_merge(graph_, global_ids(dag_, c.ops));
            if (!concurrent && !merge) continue;  // outside the strategy's stage family
            ++stats_.transitions;
            // Entries are nodes of an unordered_map: references survive later insertions.
            const Entry& rest = solve(state & ~c.ops);
            best.schedules += (int(concurrent) + int(merge)) * rest.schedules;
            if (rest.cost == kInf) continue;  // nothing could run before this stage
            if (concurrent) consider(best, c.ops, concurrent_stage(dag_, c.groups), rest.cost);
            if (merge)
                consider(best, c.ops, Stage{StageStrategy::Merge, {global_ids(dag_, c.ops)}},
                         rest.cost);
        }
        progress_.advance();
        return memo_.emplace(state, std::move(best)).first->second;
    }

    void consider(Entry& best, uint64_t ops, Stage stage, double before) {
        const double total = before + coster_.cost(stage, stats_);
        if (total < best.cost) {
            best.cost = total;
            best.ending = ops;
            best.stage = std::move(stage);
        }
    }

    const Graph& graph_;
    const PartDag& dag_;
    const SearchOptions& options_;
    StageCoster& coster_;
    BlockSearchStats& stats_;
    ProgressBar& progress_;
    std::optional<SteadyClock::time_point> deadline_;
    EndingLimits limits_;
    std::unordered_map<uint64_t, Entry> memo_;
};

struct Part {
    PartDag dag;
    int64_t states = 0;
};

// A model set's part halved per member: every member's first half of its ops (a prefix of its
// id range, so closed under dependencies) goes first, so both halves keep the members side by
// side instead of one half per member, which would run the members one after another.
std::pair<std::vector<int>, std::vector<int>> halve_per_member(const Graph& graph,
                                                               const std::vector<int>& ops) {
    std::vector<std::vector<int>> by_member(graph.members().size());
    for (int id : ops) by_member[size_t(graph.member_of(id))].push_back(id);
    std::vector<int> first, second;
    for (const auto& member_ops : by_member) {
        const auto mid = member_ops.begin() + std::ptrdiff_t((member_ops.size() + 1) / 2);
        first.insert(first.end(), member_ops.begin(), mid);
        second.insert(second.end(), mid, member_ops.end());
    }
    std::sort(first.begin(), first.end());
    std::sort(second.begin(), second.end());
    return {std::move(first), std::move(second)};
}

bool spans_members(const Graph& graph, const std::vector<int>& ops) {
    return !graph.members().empty() && graph.member_of(ops.front()) != graph.member_of(ops.back());
}

// Consecutive pieces of the block's ops (a topological order) that fit the DP's limits.
void split_into_parts(const Graph& graph, const std::vector<int>& ops, const SearchOptions& options,
                      std::vector<Part>& parts) {
    const bool too_many_ops = ops.size() > size_t(options.max_part_ops);
    if (too_many_ops && !spans_members(graph, ops)) {
        const auto mid = ops.begin() + options.max_part_ops;
        split_into_parts(graph, {ops.begin(), mid}, options, parts);
        split_into_parts(graph, {mid, ops.end()}, options, parts);
        return;
    }
    PartDag dag;
    int64_t states = 0;
    if (!too_many_ops) {
        dag = make_part_dag(graph, ops);
        states = count_states(dag, std::max(options.max_part_states, options.max_set_part_states));
    }
    const int64_t limit = spans_members(graph, ops) ? options.max_set_part_states
                                                    : options.max_part_states;
    if (too_many_ops || (states > limit && ops.size() > 1)) {
        auto [first, second] = spans_members(graph, ops)
            ? halve_per_member(graph, ops)
            : std::pair{std::vector<int>(ops.begin(), ops.begin() + std::ptrdiff_t(ops.size() / 2)),
                        std::vector<int>(ops.begin() + std::ptrdiff_t(ops.size() / 2), ops.end())};
        split_into_parts(graph, first, options, parts);
        split_into_parts(graph, second, options, parts);
        return;
    }
    parts.push_back({std::move(dag), states});
}

void check_options(const SearchOptions& options) {
    if (options.prune && (options.max_group_ops < 1 || options.max_groups < 1))
        throw Error(fmt::format("search: pruning needs r >= 1 and s >= 1 (got r={}, s={}); use "
                                "--no-prune for no limit",
                                options.max_group_ops, options.max_groups));
    if (options.max_part_ops < 1 || options.max_part_ops > kMaxPartOps)
        throw Error(fmt::format("search: max_part_ops must be in 1..{} (got {})", kMaxPartOps,
                                options.max_part_ops));
    if (options.max_set_part_states < 2)
        throw Error(fmt::format("search: the model-set part bound must be at least 2 (got {})",
                                options.max_set_part_states));
    if (options.max_part_states < 2)
        throw Error(fmt::format("search: max_part_states must be at least 2 (got {})",
                                options.max_part_states));
}

// A stand-in cost model for counting: every stage is free, so a dry run of the DP enumerates
// exactly the stages a real run would cost, and StageCoster counts the distinct ones.
class CountingCostModel final : public CostModel {
public:
    StageMeasurement measure(const Graph&, const Stage&) override { return {}; }
    std::string name() const override { return "counting"; }
    bool simulated() const override { return true; }
};

// The largest part bound, halving from options.max_part_states, whose windows need at most
// options.max_stages distinct stage measurements (counted by a dry run of the DP; the dry runs
// take a second or so of CPU at the default bound).
int64_t fitting_part_states(const Graph& graph, const std::vector<Block>& blocks,
                            const SearchOptions& options) {
    int64_t limit = options.max_part_states;
    for (; limit > kMinFittedPartStates; limit /= 2) {
        SearchOptions trial = options;
        trial.max_part_states = limit;
        CountingCostModel counting;
        StageCoster coster(graph, counting);
        BlockSearchStats stats;
        ProgressBar silent("", 0, false);
        for (const Block& block : blocks) {
            std::vector<Part> parts;
            split_into_parts(graph, block.ops, trial, parts);
            for (const Part& part : parts) {
                double latency = 0;
                PartSearch(graph, part.dag, trial, coster, stats, silent, std::nullopt).run(latency);
                if (stats.stages_costed > options.max_stages) break;
            }
            if (stats.stages_costed > options.max_stages) break;
        }
        if (stats.stages_costed <= options.max_stages) break;
    }
    return limit;
}

}  // namespace

SearchResult ios_search(const Graph& graph, CostModel& model, const SearchOptions& options) {
    check_options(options);
    StageCoster coster(graph, model);
    // A model set's members are aligned by what their ops cost here (blocks.h); those
    // single-op stages are the sequential schedule's, so the DP finds them cached.
    BlockSearchStats alignment;
    const std::vector<Block> blocks =
        graph.members().empty()
            ? partition_blocks(graph)
            : partition_blocks(graph, [&](int id) {
                  const double ms = coster.cost(Stage{StageStrategy::Concurrent, {{id}}}, alignment);
                  return std::isfinite(ms) ? ms : 0.0;
              });
    SearchResult result;
    result.part_states = options.max_stages > 0 ? fitting_part_states(graph, blocks, options)
                                                : options.max_part_states;
    SearchOptions fitted = options;
    fitted.max_part_states = result.part_states;
    std::vector<std::vector<Part>> parts(blocks.size());
    int64_t total_states = 0;
    for (size_t b = 0; b < blocks.size(); ++b) {
        split_into_parts(graph, blocks[b].ops, fitted, parts[b]);
        for (const Part& p : parts[b]) total_states += p.states;
    }

    ProgressBar progress(fmt::format("search {}", graph.name()), total_states, options.progress);
    std::optional<SteadyClock::time_point> deadline;
    if (options.time_budget_s > 0)
        deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                            std::chrono::duration<double>(options.time_budget_s));
    bool out_of_time = false;
    for (size_t b = 0; b < blocks.size(); ++b) {
        const auto start = std::chrono::steady_clock::now();
        // The alignment's measurements are counted with the first block's.
        BlockSearchStats stats = b == 0 ? alignment : BlockSearchStats{};
        stats.block = int(b);
        stats.parts = int(parts[b].size());
        stats.ops = int(blocks[b].ops.size());
        stats.width = blocks[b].width;
        std::vector<Stage> stages;
        for (const Part& part : parts[b]) {
            double latency = 0;
            std::vector<Stage> part_stages;
            if (!out_of_time) {
                try {
                    PartSearch search(graph, part.dag, fitted, coster, stats, progress, deadline);
                    part_stages = search.run(latency);
                } catch (const OutOfTime&) {
                    out_of_time = true;
                }
            }
            if (out_of_time) {
                // Past the deadline: the greedy rule's stages, costed so the prediction holds.
                ++stats.parts_out_of_time;
                const int width = 0;  // unused by the greedy rule
                part_stages = greedy_block_stages(graph, Block{int(b), part.dag.ops, width});
                for (const Stage& stage : part_stages) latency += coster.cost(stage, stats);
            }
            if (part_stages.empty())
                throw Error(fmt::format(
                    "search: no usable schedule for block {} of '{}' (ops {}..{}): the cost model "
                    "'{}' failed on every candidate; first failure: {}",
                    b, graph.name(), part.dag.ops.front(), part.dag.ops.back(), model.name(),
                    coster.first_failure()));
            stats.latency_ms += latency;
            stages.insert(stages.end(), part_stages.begin(), part_stages.end());
        }
        stats.wall_s = seconds_since(start);
        result.latency_ms += stats.latency_ms;
        result.schedule.blocks.push_back(std::move(stages));
        result.stats.blocks.push_back(stats);
    }
    progress.finish();
    return result;
}

}  // namespace iostune
