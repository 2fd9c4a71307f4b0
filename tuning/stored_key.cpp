#include "tuning/stored_key.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "db/report_rows.h"
#include "db/schedule_store.h"
#include "src/model_json.h"
#include "tuning/job_device.h"

namespace iostune {

std::optional<StoredKey> stored_result(const Graph& graph, const TuningOptions& options) {
    std::error_code ec;
    // A missing or empty file holds nothing; `search` creates or fills it.
    if (!std::filesystem::exists(options.db_path, ec) ||
        std::filesystem::file_size(options.db_path, ec) == 0 || ec)
        return std::nullopt;
    const JobDevice where = job_device(options);
    const db::ScheduleStore store = db::ScheduleStore::open(options.db_path, db::OpenMode::MustExist);
    const auto device_id = store.find_device(where.record);
    if (!device_id) return std::nullopt;
    auto best = store.report_key(fingerprint(graph), *device_id, graph.batch(), options.precision);
    if (!best) return std::nullopt;
    const std::optional<double> seconds = db::search_seconds(store, best->schedule);
    std::vector<std::string> quick;  // the best schedule's choices made in a hurry
    if (best->schedule.conv_choices.is_object())
        for (const auto& [signature, choice] : best->schedule.conv_choices.items())
            if (db::is_quick_choice(choice)) quick.push_back(signature);
    if (quick.empty()) return StoredKey{std::move(*best), seconds, 0};
    // Only then the device's choices (every row's, parsed), a fully timed one before any quick
    // one per signature: a later search of the model (or of another with the same shapes) that
    // timed a quick one in full has replaced it there.
    const nlohmann::json timed = store.conv_choices_on(where.record);
    const auto untimed = std::count_if(quick.begin(), quick.end(), [&](const std::string& s) {
        return !timed.contains(s) || db::is_quick_choice(timed[s]);
    });
    return StoredKey{std::move(*best), seconds, int(untimed)};
}

}  // namespace iostune
