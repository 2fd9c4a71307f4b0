#include "db/report_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "db/schedule_origin.h"

namespace iostune::db {

namespace {

bool is_estimate(const ReportRow& row) { return !row.schedule.measured_ms.has_value(); }

std::optional<double> stat(const ScheduleRecord& s, const char* key) {
    if (!s.search_stats.contains(key) || !s.search_stats[key].is_number()) return std::nullopt;
    return s.search_stats[key].get<double>();
}

nlohmann::json value_or_null(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string device_type(const DeviceRecord& device) {
    if (device.name.rfind("sim:", 0) == 0) return device.name;  // a simulated profile
    return fmt::format("{} (cc {}.{})", device.name, device.cc_major, device.cc_minor);
}

std::optional<double> search_seconds(const ScheduleStore& store, const ScheduleRecord& row) {
    if (const auto own = stat(row, "search_seconds")) return own;
    const auto searched = row.search_stats.find("baseline_of_schedule");
    if (searched == row.search_stats.end() || !searched->is_number_integer()) return std::nullopt;
    const auto origin = store.schedule(searched->get<std::int64_t>());
    return origin ? stat(*origin, "search_seconds") : std::nullopt;
}

std::vector<ReportRow> report_rows(const ScheduleStore& store) {
    std::vector<ReportRow> rows = store.report_best();
    for (ReportRow& row : store.report_estimates()) rows.push_back(std::move(row));
    for (ReportRow& row : rows) row.search_seconds = search_seconds(store, row.schedule);
    std::sort(rows.begin(), rows.end(), [](const ReportRow& a, const ReportRow& b) {
        const std::string type_a = device_type(a.device), type_b = device_type(b.device);
        return std::tie(type_a, a.model_name, a.fingerprint, a.device.id, a.schedule.batch,
                        a.schedule.precision) < std::tie(type_b, b.model_name, b.fingerprint,
                                                         b.device.id, b.schedule.batch,
                                                         b.schedule.precision);
    });
    return rows;
}

std::vector<int> tuned_batches(const std::vector<ReportRow>& rows, const ReportRow& row) {
    std::vector<int> sizes;
    for (const ReportRow& other : rows)
        if (other.fingerprint == row.fingerprint && other.device.id == row.device.id &&
            other.schedule.precision == row.schedule.precision)
            sizes.push_back(other.schedule.batch);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

int quick_convolutions(const ScheduleRecord& schedule) {
    if (!schedule.conv_choices.is_object()) return 0;
    int quick = 0;
    for (const auto& [signature, choice] : schedule.conv_choices.items())
        if (is_quick_choice(choice)) ++quick;
    return quick;
}

nlohmann::json report_row_json(const ReportRow& row, const std::vector<int>& tuned) {
    const ScheduleRecord& s = row.schedule;
    return {{"schedule_id", s.id},
            {"model", row.model_name},
            {"fingerprint", row.fingerprint},
            {"device", row.device.name},
            {"device_type", device_type(row.device)},
            {"device_id", row.device.id},
            {"cudnn", row.device.cudnn_version},
            {"driver", row.device.driver_version},
            {"batch", s.batch},
            {"tuned_batches", tuned},
            {"precision", s.precision},
            {"layout", s.layout},
            {"strategy", s.strategy},
            {"r", s.r},
            {"s", s.s},
            {"simulated", is_estimate(row)},
            {"kind", is_estimate(row) ? "estimate" : "measured"},
            {"measured_ms", value_or_null(s.measured_ms)},
            {"sequential_ms", value_or_null(s.sequential_ms)},
            {"predicted_ms", value_or_null(s.predicted_ms)},
            {"speedup", value_or_null(row.speedup)},
            {"prediction_error", value_or_null(row.prediction_error)},
            {"search_seconds", value_or_null(row.search_seconds)},
            {"stages_costed", value_or_null(stat(s, "stages_costed"))},
            {"arena_bytes", s.arena_bytes ? nlohmann::json(*s.arena_bytes) : nlohmann::json(nullptr)},
            {"quick_convolutions", quick_convolutions(s)},
            {"origin", origin_json(schedule_origin(s))},
            {"tool_version", s.tool_version},
            {"git_commit", s.git_commit},
            {"created_at", s.created_at}};
}

nlohmann::json report_json(const std::vector<ReportRow>& rows) {
    nlohmann::json doc = nlohmann::json::array();
    for (const ReportRow& row : rows) doc.push_back(report_row_json(row, tuned_batches(rows, row)));
    return doc;
}

}  // namespace iostune::db
