// Builds the simulated cost model behind the CostModel interface. Kept in its own file because
// search/op_estimate.h and src/engine/engine.h both declare an iostune::MathMode, so no file may
// include both (see the report of issue 5).
#pragma once

#include <memory>
#include <string>

#include "search/cost_model.h"

namespace iostune {

// `profile`: a device profile name (search/device_profile.h); `math`: "tf32" or "fp32".
std::unique_ptr<CostModel> make_sim_cost_model(const std::string& profile, const std::string& math);

}  // namespace iostune
