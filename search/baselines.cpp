#include "search/baselines.h"

#include <fmt/format.h>

#include "search/device_profile.h"
#include "search/greedy_scheduler.h"
#include "search/model_set_baselines.h"
#include "search/nimble_scheduler.h"
#include "search/op_estimate.h"
#include "search/opara_scheduler.h"
#include "src/error.h"

namespace iostune {

std::vector<std::string> baseline_names() { return {"sequential", "greedy", "nimble", "opara"}; }

Schedule make_baseline(const std::string& name, const Graph& graph,
                       const OpResourceTable* resources) {
    if (name == "sequential") return sequential_schedule(graph);
    if (name == "greedy") return greedy_schedule(graph);
    if (name == "nimble") return nimble_schedule(graph);
    if (name == "streams") return member_streams_schedule(graph);
    if (name == "opara") {
        if (!resources)
            return opara_schedule(graph,
                                  estimate_resource_table(graph, device_profile("h100"), Precision::Tf32));
        if (resources->ops.size() != size_t(graph.size()))
            throw Error(fmt::format("resource table '{}' covers {} ops but graph '{}' has {}; "
                                    "profile this graph (same model and batch) first",
                                    resources->source, resources->ops.size(), graph.name(),
                                    graph.size()));
        return opara_schedule(graph, *resources);
    }
    throw Error(fmt::format("unknown baseline '{}'; choose one of: {} (and for model sets: streams)",
                            name, fmt::join(baseline_names(), ", ")));
}

}  // namespace iostune
