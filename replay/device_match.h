// Which stored device rows a schedule may be replayed on: the GPU it was measured on is part of
// its key, since another GPU (or another cuDNN, whose kernels differ) makes its timing void.
#pragma once

#include <string>

#include "db/records.h"
#include "src/engine/device_info.h"

namespace iostune {

// The store's row for a real GPU (versions as text, e.g. cuDNN "9.19.0").
db::DeviceRecord to_device_record(const DeviceInfo& info);
// The row under which the simulated cost model's estimates are kept, e.g. "sim:h100".
db::DeviceRecord sim_device_record(const std::string& profile);
bool is_sim_device(const db::DeviceRecord& device);

// Empty if a schedule tuned on `stored` may run on `here` (same GPU name and compute capability,
// same cuDNN major version; driver and CUDA updates are allowed), otherwise what differs.
std::string device_mismatch(const db::DeviceRecord& stored, const db::DeviceRecord& here);

// "NVIDIA H100 80GB HBM3 (cc 9.0, cuDNN 9.19.0, driver 13.0)"
std::string describe_device(const db::DeviceRecord& device);

}  // namespace iostune
