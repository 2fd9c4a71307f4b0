// `iostune db merge`: the parts that Slurm array tasks (or any separate runs) wrote, merged into
// one schedule store. Every part is read and checked whole before the target is opened, and the
// target gets all of their rows in one transaction or none (merge_plan.h says what is a
// conflict). Parts are only read.
#pragma once

#include <string>
#include <vector>

#include "db/schedule_store.h"
#include "db/store_snapshot.h"

namespace iostune::db {

struct MergeSummary {
    int parts = 0;
    int devices_added = 0;
    int models_added = 0;
    int schedules_added = 0;
    int schedules_present = 0;  // held already: the same part merged before
    int stages_added = 0;       // new stage measurements
    int stages_replaced = 0;    // newer measurements of a stage the target held
    int stages_present = 0;     // held already, or older than the target's
    int keys = 0;               // (model, device, batch, precision) keys in the target after
};

// Throws iostune::Error, leaving `into` as it was (and not creating it when a part is refused
// before it is opened), for: no parts, a part that is `into` itself, a missing, foreign,
// damaged or other-schema part, a conflict between parts or with `into`.
MergeSummary merge_stores(const std::string& into, const std::vector<std::string>& parts);

}  // namespace iostune::db
