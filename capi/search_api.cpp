// iostune_search: the tuning job (tuning/tuning_job.h) behind `iostune search`, with the
// caller's options checked first so that a bad one is reported before any database is touched.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>

#include "capi/api_status.h"
#include "capi/model_handle.h"
#include "capi/search_result_handle.h"
#include "capi/time_budget.h"
#include "search/device_profile.h"
#include "src/precision.h"
#include "src/tensor_layout.h"
#include "tuning/tuning_job.h"
#include "tuning/tuning_summary_json.h"

using namespace iostune;

namespace {

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');)
        if (!part.empty()) parts.push_back(part);
    return parts;
}

TuningOptions tuning_options(const iostune_search_options& o) {
    return capi::parse_input([&] {
        TuningOptions t;
        t.precision = capi::or_default(o.precision, "tf32");
        precision_from_string(t.precision);
        t.cost = cost_choice_from_string(capi::or_default(o.cost, "auto"));
        t.db_path = capi::or_default(o.db_path, "iostune.db");
        const std::string strategy = capi::or_default(o.strategy, "ios-both");
        const auto parsed = search_strategy_from_string(strategy);
        if (!parsed)
            throw Error(fmt::format("unknown strategy '{}'; use ios-both, ios-parallel or ios-merge",
                                    strategy));
        t.search.strategy = *parsed;
        t.search.prune = o.no_prune == 0;
        capi::require(o.no_prune != 0 || (o.r > 0 && o.s > 0),
                      fmt::format("pruning needs r > 0 and s > 0, got r={} s={}", o.r, o.s));
        t.search.max_group_ops = o.r;
        t.search.max_groups = o.s;
        t.search.progress = o.progress != 0;
        const std::string layout = capi::or_default(o.layout, "auto");
        if (layout != "auto") t.layout = tensor_layout_from_string(layout);
        t.contenders = split_commas(capi::or_default(o.contenders, "greedy,nimble"));
        contender_list(t.contenders);
        t.sim_device = capi::or_default(o.sim_device, "h100");
        device_profile(t.sim_device);
        capi::require(o.time_budget_s >= 0,
                      fmt::format("time_budget_s must be >= 0 (0: no limit), got {}", o.time_budget_s));
        capi::require(o.memory_limit >= 0,
                      fmt::format("memory_limit must be >= 0 (0: no limit), got {}", o.memory_limit));
        t.memory_limit = o.memory_limit;
        return t;
    });
}

// Where the caller's notices go: its callback, or stderr as the CLI prints them.
std::function<void(const std::string&)> notice_sink(const iostune_search_options& o) {
    if (o.notice == nullptr)
        return [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    return [fn = o.notice, user = o.notice_user_data](const std::string& line) {
        fn(line.c_str(), user);
    };
}

// The row replay will use: the searched schedule, or the baseline that measured faster.
void describe_best(const TuningSummary& t, iostune_search_result& r) {
    r.schedule_id = t.best_schedule_id != 0 ? t.best_schedule_id : t.schedule_id;
    r.strategy = t.kept_strategy.empty() ? t.strategy : t.kept_strategy;
    r.simulated = t.simulated;
    r.latency_ms = t.measured_ms.value_or(t.predicted_ms);
    if (r.schedule_id != t.schedule_id) {
        const auto kept = std::find_if(t.baseline_ms.begin(), t.baseline_ms.end(),
                                       [&](const ContestEntry& e) { return e.strategy == r.strategy; });
        if (kept != t.baseline_ms.end()) r.latency_ms = kept->median_ms;
    }
}

}  // namespace

extern "C" {

int iostune_has_feature(const char* name) {
    if (name == nullptr) return 0;
    if (std::string(name) == "time_budget") return capi::search_has_time_budget<TuningOptions>() ? 1 : 0;
    return 0;
}

void iostune_search_options_init(iostune_search_options* options) {
    if (options == nullptr) return;
    const TuningOptions defaults;
    *options = iostune_search_options{};
    options->struct_size = sizeof(iostune_search_options);
    options->r = defaults.search.max_group_ops;
    options->s = defaults.search.max_groups;
    options->progress = 1;
    options->memory_limit = defaults.memory_limit;
}

iostune_status iostune_search(const iostune_model* model, const iostune_search_options* options,
                              iostune_search_result** result) {
    return capi::guarded([&] {
        capi::require(result != nullptr, "iostune_search: the result pointer is NULL");
        *result = nullptr;
        const iostune_model& m = capi::model_ref(model, "iostune_search");
        capi::require(options != nullptr, "iostune_search: the options are NULL; pass a struct "
                                          "set by iostune_search_options_init");
        capi::require_struct_size(options->struct_size, sizeof(iostune_search_options),
                                  "iostune_search_options");
        capi::require(options->batch >= 0,
                      fmt::format("batch size must be positive, got {}", options->batch));
        TuningOptions tuning = tuning_options(*options);
        const auto notice = notice_sink(*options);
        if (options->time_budget_s > 0 && !capi::set_time_budget(tuning, options->time_budget_s))
            notice(fmt::format("notice: time budget of {} s ignored: this build's search has no "
                               "time budget (it runs to the end)",
                               options->time_budget_s));
        const Graph graph = m.at_batch(options->batch > 0 ? options->batch : m.batch);
        const TuningSummary summary = run_tuning_job(graph, tuning, notice);
        auto out = std::make_unique<iostune_search_result>();
        describe_best(summary, *out);
        out->json = tuning_summary_json(summary).dump(2);
        *result = out.release();
    });
}

void iostune_search_result_free(iostune_search_result* result) { delete result; }

int64_t iostune_search_result_schedule_id(const iostune_search_result* result) {
    return result != nullptr ? result->schedule_id : 0;
}
double iostune_search_result_latency_ms(const iostune_search_result* result) {
    return result != nullptr ? result->latency_ms : 0.0;
}
const char* iostune_search_result_strategy(const iostune_search_result* result) {
    return result != nullptr ? result->strategy.c_str() : "";
}
int iostune_search_result_simulated(const iostune_search_result* result) {
    return result != nullptr && result->simulated ? 1 : 0;
}
const char* iostune_search_result_json(const iostune_search_result* result) {
    return result != nullptr ? result->json.c_str() : "";
}

}  // extern "C"
