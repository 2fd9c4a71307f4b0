// A tuning job's summary as `iostune search --format json` prints it, shared by the CLI and the
// C API (iostune_search_result_json, the Python package's iostune.search()), so both give the
// same fields.
#pragma once

#include <nlohmann/json.hpp>

#include "tuning/tuning_job.h"

namespace iostune {

nlohmann::json tuning_summary_json(const TuningSummary& summary);

}  // namespace iostune
