#include "tuning/job_device.h"

#include <fmt/format.h>

#include "replay/device_match.h"
#include "replay/gpu_check.h"
#include "src/engine/device_info.h"
#include "src/error.h"

namespace iostune {

JobDevice job_device(const TuningOptions& options) {
    JobDevice where;
    where.simulated = options.cost == CostChoice::Sim;
    if (!where.simulated) {
        const std::string why = gpu_unavailable_reason();
        if (!why.empty() && options.cost == CostChoice::Measured)
            throw Error(
                fmt::format("--cost measured needs an NVIDIA GPU, and this machine has none "
                            "usable ({}); run on the GPU machine or use --cost sim",
                            why),
                ErrorKind::NoGpu);
        where.simulated = !why.empty();
        where.no_gpu_reason = why;
    }
    where.record = where.simulated ? sim_device_record(options.sim_device)
                                   : to_device_record(query_device_info(options.device));
    return where;
}

}  // namespace iostune
