// The device under which a tuning job stores its numbers: the GPU it measures on, or the
// simulated cost model's profile ("sim:h100") when it simulates (--cost sim, or --cost auto on a
// machine without a usable GPU). One decision shared by the job and by `search --skip-stored`,
// so a skipped key is exactly one the job would have stored under the same device row.
#pragma once

#include <string>

#include "db/records.h"
#include "tuning/tuning_job.h"

namespace iostune {

struct JobDevice {
    bool simulated = false;
    std::string no_gpu_reason;  // why --cost auto fell back to the simulation; "" otherwise
    db::DeviceRecord record;    // the store's device row (its id unset)
};

// Throws iostune::Error for --cost measured on a machine without a usable GPU.
JobDevice job_device(const TuningOptions& options);

}  // namespace iostune
