#include "profiler/occupancy.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"

namespace iostune {

namespace {

int64_t round_up(int64_t value, int64_t unit) { return (value + unit - 1) / unit * unit; }

}  // namespace

SmLimits current_device_sm_limits() {
    int device = 0;
    cudaDeviceProp prop{};
    cudaError_t status = cudaGetDevice(&device);
    if (status == cudaSuccess) status = cudaGetDeviceProperties(&prop, device);
    if (status != cudaSuccess)
        throw Error(fmt::format("profiler: reading device properties failed: {}",
                                cudaGetErrorString(status)));
    SmLimits sm;
    sm.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    sm.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
    sm.registers_per_sm = prop.regsPerMultiprocessor;
    sm.shared_bytes_per_sm = int(prop.sharedMemPerMultiprocessor);
    sm.reserved_shared_per_block = int(prop.reservedSharedMemPerBlock);
    sm.warp_size = prop.warpSize;
    return sm;
}

OccupancyEstimate theoretical_occupancy(const SmLimits& sm, int64_t threads_per_block,
                                        int registers_per_thread, int64_t shared_bytes_per_block) {
    OccupancyEstimate est;
    if (threads_per_block <= 0) return est;
    const int64_t warps_per_block = (threads_per_block + sm.warp_size - 1) / sm.warp_size;
    const int64_t max_warps = sm.max_threads_per_sm / sm.warp_size;

    int64_t limit = sm.max_blocks_per_sm;
    est.limited_by = "blocks";
    auto tighten = [&](int64_t candidate, const char* why) {
        if (candidate < limit) {
            limit = candidate;
            est.limited_by = why;
        }
    };
    tighten(max_warps / warps_per_block, "threads");
    if (registers_per_thread > 0) {
        const int64_t regs_per_warp = round_up(int64_t(registers_per_thread) * sm.warp_size,
                                               sm.register_alloc_unit);
        tighten(sm.registers_per_sm / (regs_per_warp * warps_per_block), "registers");
    }
    const int64_t shared = round_up(shared_bytes_per_block + sm.reserved_shared_per_block,
                                    sm.shared_alloc_unit);
    if (shared_bytes_per_block > 0) tighten(sm.shared_bytes_per_sm / shared, "shared memory");

    est.blocks_per_sm = int(std::max<int64_t>(limit, 0));
    est.occupancy = double(est.blocks_per_sm * warps_per_block) / double(max_warps);
    return est;
}

}  // namespace iostune
