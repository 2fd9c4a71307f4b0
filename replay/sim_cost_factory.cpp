#include "replay/sim_cost_factory.h"

#include "search/sim_cost_model.h"

namespace iostune {

std::unique_ptr<CostModel> make_sim_cost_model(const std::string& profile, const std::string& math) {
    return std::make_unique<SimCostModel>(device_profile(profile), math_mode_from_string(math));
}

}  // namespace iostune
