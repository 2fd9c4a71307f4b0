// `iostune search --skip-stored`: the row a tuning job's key already has in the store, so that
// rerunning a tuning plan skips the keys that are done. The key is the model's fingerprint, the
// device the job would store under (job_device.h), the batch and the precision, whatever the
// search settings that found the stored schedule.
#pragma once

#include <optional>

#include "db/records.h"
#include "src/graph.h"
#include "tuning/tuning_job.h"

namespace iostune {

struct StoredKey {
    db::ReportRow best;  // the key's best measured schedule, or (simulated) its best estimate
    // What the search that produced it took; for a baseline kept over the searched schedule,
    // that search's.
    std::optional<double> search_seconds;
    // Of the best schedule's convolutions chosen in a hurry ("quick": its search ran short of
    // time, src/conv_choices.h), those no later schedule on this device has timed in full: none
    // means the key is done; otherwise a search again times them (`--skip-stored` searches it).
    int untimed_convolutions = 0;
};

// The key's row in options.db_path; empty when the store or the key's row is missing. Never
// creates the store.
std::optional<StoredKey> stored_result(const Graph& graph, const TuningOptions& options);

}  // namespace iostune
