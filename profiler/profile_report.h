// Human and machine renderings of a ModelProfile: the per-operator table `iostune profile`
// prints, and a JSON document for results/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "profiler/model_profile.h"

namespace iostune {

// Top `top` operators by time, then totals (op sum, span, GPU-busy fraction, critical path).
std::string format_profile_table(const ModelProfile& profile, int top = 25);

nlohmann::json profile_to_json(const ModelProfile& profile);

// The device a measurement ran on, as every JSON result names it.
nlohmann::json device_to_json(const DeviceInfo& device);

}  // namespace iostune
