// RAII CUPTI Activity API session: while alive, records every kernel, memcpy and memset with
// start/end, launch shape, registers, shared memory and stream; operators are attributed through
// external correlation ids (OpScope). One collector may exist at a time (CUPTI's callbacks are
// process-wide).
#pragma once

#include <cstdint>
#include <vector>

#include "profiler/activity_records.h"

namespace iostune {

struct ActivityTrace {
    std::vector<KernelRecord> kernels;
    std::vector<TransferRecord> transfers;
};

class ActivityCollector {
public:
    ActivityCollector();
    ~ActivityCollector();
    ActivityCollector(const ActivityCollector&) = delete;
    ActivityCollector& operator=(const ActivityCollector&) = delete;

    // Waits for the device, flushes CUPTI's buffers and returns (and forgets) everything
    // recorded so far, with each record's op_id filled in from the external correlations.
    ActivityTrace collect();

private:
    bool active_ = false;
};

// Marks the work launched from this thread during the scope as belonging to operator `op_id`.
class OpScope {
public:
    explicit OpScope(int64_t op_id);
    ~OpScope();
    OpScope(const OpScope&) = delete;
    OpScope& operator=(const OpScope&) = delete;
};

}  // namespace iostune
