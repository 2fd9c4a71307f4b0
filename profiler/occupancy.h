// Theoretical occupancy of a kernel launch from its resource demand, the way CUDA's occupancy
// calculator derives it: resident blocks per SM are limited by threads, blocks, registers and
// shared memory; occupancy = resident warps / maximum warps per SM.
#pragma once

#include <cstdint>

namespace iostune {

struct SmLimits {
    int max_threads_per_sm = 2048;
    int max_blocks_per_sm = 32;
    int registers_per_sm = 65536;
    int shared_bytes_per_sm = 233472;     // usable by blocks (H100: 228 KiB)
    int reserved_shared_per_block = 1024;  // the runtime's per-block reservation
    int warp_size = 32;
    int register_alloc_unit = 256;         // registers are allocated per warp in this unit
    int shared_alloc_unit = 128;
};

// SM limits of the current CUDA device (throws iostune::Error without one).
SmLimits current_device_sm_limits();

struct OccupancyEstimate {
    int blocks_per_sm = 0;
    double occupancy = 0.0;  // 0..1
    const char* limited_by = "";
};

OccupancyEstimate theoretical_occupancy(const SmLimits& sm, int64_t threads_per_block,
                                        int registers_per_thread, int64_t shared_bytes_per_block);

}  // namespace iostune
