// The rows `iostune report` lists and their JSON, shared by the CLI (`report --format json`)
// and the C API (iostune_report_json, the Python package's iostune.report()), so both give the
// same fields.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "db/records.h"
#include "db/schedule_store.h"

namespace iostune::db {

// What reports group by: the GPU model, whatever driver, CUDA or cuDNN each row was measured
// with (those make separate device rows, each its own best), or the simulated profile.
std::string device_type(const DeviceRecord& device);

// The best measured schedule of every key, then the best estimate of every key that has only
// estimates (simulated), ordered by device type, model, fingerprint, device, batch and
// precision, each with its key's search_seconds.
std::vector<ReportRow> report_rows(const ScheduleStore& store);

// The time the search of a row's key took: the row's own, or, for a baseline row the search's
// final contest stored beside its schedule (search stats "baseline_of_schedule"), that of the
// searched row it names. None when neither says.
std::optional<double> search_seconds(const ScheduleStore& store, const ScheduleRecord& row);

// The batch sizes `rows` hold for the model, device and precision of `row` (sorted): the sizes
// a replay of that model on that device can serve without padding (iostune/batch_replayer.h).
std::vector<int> tuned_batches(const std::vector<ReportRow>& rows, const ReportRow& row);

// How many of the schedule's convolution choices were made in a hurry (is_quick_choice, records.h):
// searching the key again times them in full.
int quick_convolutions(const ScheduleRecord& schedule);

// One row as `iostune report --format json` prints it; `tuned` is tuned_batches() of it.
nlohmann::json report_row_json(const ReportRow& row, const std::vector<int>& tuned);

// Every row of report_rows() as JSON, in order.
nlohmann::json report_json(const std::vector<ReportRow>& rows);

}  // namespace iostune::db
