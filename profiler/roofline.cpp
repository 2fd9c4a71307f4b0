#include "profiler/roofline.h"

#include <algorithm>

namespace iostune {

RooflineBound roofline_bound(const DeviceCeilings& ceilings, int64_t flops, int64_t bytes,
                             double measured_us) {
    RooflineBound r;
    if (ceilings.flops_per_s <= 0 || ceilings.bytes_per_s <= 0) return r;
    const double compute_us = 1e6 * double(flops) / ceilings.flops_per_s;
    const double memory_us = 1e6 * double(bytes) / ceilings.bytes_per_s;
    r.bound_us = std::max(compute_us, memory_us);
    r.compute_bound = compute_us > memory_us;
    r.fraction = measured_us > 0 ? r.bound_us / measured_us : 0;
    return r;
}

}  // namespace iostune
