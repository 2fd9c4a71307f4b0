// What merging schedule stores adds to a base store, decided in memory before anything is
// written, so a part that conflicts is refused with nothing merged.
//
// Rows are matched by identity, not id (store_snapshot.h). A row the base already holds is
// skipped, so merging a part twice adds nothing. Conflicts, refused:
//   - a model fingerprint whose graph differs between two stores (the fingerprint is what a
//     schedule is keyed and replayed by; two graphs under one means a store was edited or came
//     from a build that fingerprints models differently);
//   - a schedule, or a stage measurement, equal in identity (key, settings, provenance, time)
//     but different in content: a row edited after it was written.
// Two measurements of one stage made at different times are no conflict: the newer one is kept,
// as a re-measurement replaces the older in a single store. Schedules are never replaced: every
// one is kept with its provenance, and the best of a key is its measured-fastest row.
#pragma once

#include <string>
#include <vector>

#include "db/records.h"
#include "db/store_snapshot.h"

namespace iostune::db {

// A row of one part, with the part it comes from (whose ids it uses).
template <typename Record>
struct PartRow {
    const StoreSnapshot* part = nullptr;
    const Record* row = nullptr;
};

struct MergePlan {
    std::vector<PartRow<DeviceRecord>> devices;     // devices the base lacks
    std::vector<PartRow<ModelRecord>> models;       // models (fingerprints) the base lacks
    std::vector<PartRow<ScheduleRecord>> schedules; // schedules the base lacks, in part order
    std::vector<PartRow<StageRecord>> stages;       // new measurements, or newer than the base's
    int stages_replacing = 0;    // of `stages`: replacing an older measurement of the stage
    int schedules_present = 0;   // already held (an earlier merge of the same part)
    int stages_present = 0;      // not written: already held, older than the one held, or
                                 // superseded by a later part's newer measurement
};

// Throws iostune::Error for the first conflict, naming both stores and the row.
MergePlan plan_merge(const StoreSnapshot& base, const std::vector<StoreSnapshot>& parts);

}  // namespace iostune::db
