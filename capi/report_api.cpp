// The schedule database from C: `iostune report --format json` (db/report_rows.h) and the
// lookup of the schedule a replay would run (replay/schedule_selection.h), both read-only.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "capi/api_status.h"
#include "capi/model_handle.h"
#include "db/report_rows.h"
#include "db/schedule_store.h"
#include "replay/device_match.h"
#include "replay/gpu_check.h"
#include "replay/schedule_selection.h"
#include "src/engine/device_info.h"
#include "src/precision.h"

using namespace iostune;

namespace {

nlohmann::json optional_ms(const std::optional<double>& ms) {
    return ms ? nlohmann::json(*ms) : nlohmann::json(nullptr);
}

// This GPU's row, as replay compares stored schedules with it.
db::DeviceRecord this_device(int device, const std::string& model) {
    if (const std::string why = gpu_unavailable_reason(); !why.empty())
        throw Error(fmt::format("looking up the schedule of '{}' for this GPU needs an NVIDIA "
                                "GPU, and this machine has none usable ({})",
                                model, why),
                    ErrorKind::NoGpu);
    return to_device_record(query_device_info(device));
}

}  // namespace

extern "C" {

iostune_status iostune_report_json(const char* db_path, char** json) {
    return capi::guarded([&] {
        capi::require(json != nullptr, "iostune_report_json: the output pointer is NULL");
        *json = nullptr;
        const db::ScheduleStore store = db::ScheduleStore::open(
            capi::or_default(db_path, db::kDefaultDatabasePath), db::OpenMode::MustExist);
        *json = capi::new_string(db::report_json(db::report_rows(store)).dump(2));
    });
}

iostune_status iostune_schedule_lookup(const iostune_model* model, const char* db_path, int batch,
                                       const char* precision, int device, char** json) {
    return capi::guarded([&] {
        capi::require(json != nullptr, "iostune_schedule_lookup: the output pointer is NULL");
        *json = nullptr;
        const iostune_model& m = capi::model_ref(model, "iostune_schedule_lookup");
        capi::require(batch > 0, fmt::format("batch size must be positive, got {}", batch));
        const std::string p = capi::or_default(precision, "tf32");
        capi::parse_input([&] { return precision_from_string(p); });
        const db::ScheduleStore store = db::ScheduleStore::open(
            capi::or_default(db_path, db::kDefaultDatabasePath), db::OpenMode::MustExist);
        const ScheduleQuery query{m.name, m.fingerprint, batch, p, "--model " + m.spec};
        const ScheduleChoice choice = select_schedule(
            store, query, [&] { return this_device(device, m.name); }, false);
        const db::ScheduleRecord& s = *choice.schedule;
        const nlohmann::json doc = {
            {"schedule_id", s.id},
            {"model", m.name},
            {"fingerprint", m.fingerprint},
            {"batch", s.batch},
            {"precision", s.precision},
            {"layout", s.layout},
            {"strategy", s.strategy},
            {"measured_ms", optional_ms(s.measured_ms)},
            {"sequential_ms", optional_ms(s.sequential_ms)},
            {"predicted_ms", optional_ms(s.predicted_ms)},
            {"device", choice.device ? describe_device(*choice.device) : std::string()}};
        *json = capi::new_string(doc.dump(2));
    });
}

}  // extern "C"
