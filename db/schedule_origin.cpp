#include "db/schedule_origin.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace iostune::db {

namespace {

// The schedules a search times beside its own that a user can also replay by name
// (`replay --schedule-source`): search/baselines.h's baseline_names() and a model set's two,
// written out because the store does not depend on the search. "asap" is the search's own
// candidate, not one of them.
constexpr std::array<std::string_view, 6> kBaselines = {"sequential", "greedy", "nimble",
                                                        "opara", "back-to-back", "streams"};

bool is_baseline(const std::string& start) {
    const std::string name = start.substr(0, start.find(' '));  // "nimble (dataflow)" -> nimble
    return std::find(kBaselines.begin(), kBaselines.end(), name) != kBaselines.end();
}

// A baseline replay chooses kernels to run alone; a search that chose them to co-run, or
// switched some by kernel moves ("mixed"), stored kernels that replay does not run.
bool kernels_differ(const std::string& kernels) { return kernels == "corun" || kernels == "mixed"; }

// A baseline's streams, on the search's kernels or as a baseline replay runs them.
void keeps_baseline(ScheduleOrigin& origin, const std::string& baseline) {
    origin.baseline = baseline;
    origin.kind = kernels_differ(origin.kernels) ? OriginKind::SearchKernels : OriginKind::Baseline;
}

}  // namespace

ScheduleOrigin schedule_origin(const ScheduleRecord& schedule) {
    ScheduleOrigin origin;
    const nlohmann::json& stats = schedule.search_stats;
    if (!stats.is_object()) return origin;
    if (stats.contains("conv_objective") && stats["conv_objective"].is_object() &&
        stats["conv_objective"].contains("chosen") && stats["conv_objective"]["chosen"].is_string())
        origin.kernels = stats["conv_objective"]["chosen"].get<std::string>();
    if (stats.contains("baseline_of_schedule")) {
        origin.final_contest = true;
        keeps_baseline(origin, schedule.strategy);
        return origin;
    }
    if (!stats.contains("refine") || !stats["refine"].is_object()) return origin;
    const nlohmann::json& refine = stats["refine"];
    if (!refine.contains("start") || !refine["start"].is_string()) return origin;
    origin.refined_from = refine["start"].get<std::string>();
    // The refinement's kept steps begin with its start.
    if (refine.contains("kept") && refine["kept"].is_array() && !refine["kept"].empty())
        origin.refine_changes = int(refine["kept"].size()) - 1;
    if (!is_baseline(origin.refined_from) || origin.refine_changes > 0)
        origin.kind = OriginKind::Search;  // the DP's or asap's streams, or a baseline's changed
    else if (origin.refine_changes == 0)
        keeps_baseline(origin, origin.refined_from);
    return origin;
}

std::string to_string(OriginKind kind) {
    switch (kind) {
        case OriginKind::Search: return "search";
        case OriginKind::SearchKernels: return "search_kernels";
        case OriginKind::Baseline: return "baseline";
        case OriginKind::Unknown: break;
    }
    return "unknown";
}

std::string origin_label(const ScheduleOrigin& origin) {
    switch (origin.kind) {
        case OriginKind::Search:
            return origin.refine_changes > 0
                       ? fmt::format("search: {} +{}", origin.refined_from, origin.refine_changes)
                       : fmt::format("search: {}", origin.refined_from);
        case OriginKind::SearchKernels:
            return fmt::format("{} streams, {} kernels{}", origin.baseline, origin.kernels,
                               origin.final_contest ? " (final contest)" : "");
        case OriginKind::Baseline:
            return fmt::format("{}, unchanged{}", origin.baseline,
                               origin.final_contest ? " (final contest)" : "");
        case OriginKind::Unknown: break;
    }
    return "-";
}

nlohmann::json origin_json(const ScheduleOrigin& origin) {
    const auto or_null = [](const std::string& s) {
        return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
    };
    return {{"kind", to_string(origin.kind)},
            {"refined_from", or_null(origin.refined_from)},
            {"refine_changes", origin.refine_changes < 0 ? nlohmann::json(nullptr)
                                                         : nlohmann::json(origin.refine_changes)},
            {"conv_objective", or_null(origin.kernels)},
            {"baseline", or_null(origin.baseline)},
            {"final_contest", origin.final_contest}};
}

}  // namespace iostune::db
