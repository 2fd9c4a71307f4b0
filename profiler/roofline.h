// An op's roofline: the least time its work can take on this GPU, the larger of its FLOPs at the
// arithmetic ceiling and its bytes at the bandwidth ceiling (profiler/device_ceilings.h), and the
// fraction of that bound its measured time achieves (1 = at the roofline, 0.1 = ten times slower).
#pragma once

#include <cstdint>

#include "profiler/device_ceilings.h"

namespace iostune {

struct RooflineBound {
    double bound_us = 0;      // max(flops / peak FLOP/s, bytes / peak B/s); 0 without ceilings
    double fraction = 0;      // bound_us / measured time, 0 when either is unknown
    bool compute_bound = false;  // the FLOPs term is the larger (intensity above the ridge)
};

// `measured_us` <= 0 (an op with no kernel) gives fraction 0; missing ceilings give a zero bound.
RooflineBound roofline_bound(const DeviceCeilings& ceilings, int64_t flops, int64_t bytes,
                             double measured_us);

}  // namespace iostune
