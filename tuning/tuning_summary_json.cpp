#include "tuning/tuning_summary_json.h"

namespace iostune {

namespace {

nlohmann::json optional_json(const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json baselines_json(const TuningSummary& t) {
    nlohmann::json out = nlohmann::json::object();
    for (const ContestEntry& e : t.baseline_ms) out[e.strategy] = e.median_ms;
    return out;
}

// The sequential schedule's end-to-end time per layout, when the layout was chosen by timing.
nlohmann::json layouts_json(const TuningSummary& t) {
    nlohmann::json out = nlohmann::json::object();
    for (const ContestEntry& e : t.layout_ms) out[e.strategy] = e.median_ms;
    return out;
}

}  // namespace

nlohmann::json tuning_summary_json(const TuningSummary& t) {
    return {{"skipped", false},  // `search --skip-stored` found nothing stored: it searched
            {"model", t.model},
            {"set_inputs", t.set_inputs.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.set_inputs)},
            {"fingerprint", t.fingerprint},
            {"batch", t.batch},
            {"precision", t.precision},
            {"layout", t.layout},
            {"layout_sequential_ms", layouts_json(t)},
            {"conv_objective", t.conv_objective.empty() ? nlohmann::json(nullptr)
                                                        : nlohmann::json(t.conv_objective)},
            {"strategy", t.strategy},
            {"pruning", {{"prune", t.r > 0}, {"r", t.r}, {"s", t.s}}},
            {"cost_model", t.cost_model},
            {"simulated", t.simulated},
            {"device", t.device},
            {"db", t.db_path},
            {"schedule_id", t.schedule_id},
            {"best_schedule_id", t.best_schedule_id},
            {"kept_strategy", t.kept_strategy},
            {"sequential_kept", t.sequential_kept},
            {"baselines_latency_ms", baselines_json(t)},
            {"stages", t.stages},
            {"predicted_latency_ms", t.predicted_ms},
            {"dp_predicted_latency_ms", t.dp_predicted_ms},
            {"dp_measured_latency_ms", optional_json(t.dp_measured_ms)},
            {"refined_from", t.refined_from},
            {"refine_changes", t.refine_changes},
            {"sequential_predicted_latency_ms", t.sequential_predicted_ms},
            {"measured_latency_ms", optional_json(t.measured_ms)},
            {"sequential_latency_ms", optional_json(t.sequential_ms)},
            {"max_abs_diff", optional_json(t.max_abs_diff)},
            {"stages_costed", t.stages_costed},
            {"cache_hits", t.cache_hits},
            {"search_seconds", t.search_seconds},
            {"total_seconds", t.total_seconds},
            {"stats", t.stats},
            {"schedule", schedule_to_json(t.schedule)}};
}

}  // namespace iostune
