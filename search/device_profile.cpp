#include "search/device_profile.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"

namespace iostune {

namespace {

// Registers are allocated per warp in units of 256 (CUDA occupancy calculator, cc >= 5.0).
int registers_per_block(int block_threads, int registers_per_thread) {
    const int warps = (block_threads + 31) / 32;
    const int per_warp = ((registers_per_thread * 32 + 255) / 256) * 256;
    return warps * per_warp;
}

const std::vector<DeviceProfile>& profiles() {
    static const std::vector<DeviceProfile> table{
        {
            .name = "h100",
            .description = "NVIDIA H100 SXM5 80GB (analytic profile)",
            .sm_count = 132,
            .max_threads_per_sm = 2048,
            .max_blocks_per_sm = 32,
            .registers_per_sm = 65536,
            .shared_mem_per_sm = 228 * 1024,
            .peak_fp32_flops = 66.9e12,
            .peak_tf32_flops = 494.7e12,
            .peak_fp16_flops = 989.4e12,
            .gemm_efficiency = 0.55,
            .dram_bandwidth = 3.0e12,  // ~90% of the 3.35 TB/s spec, as STREAM-like copies see
            .dram_saturation_sms = 24,
            .warps_to_saturate_sm = 8,
            .l2_bytes = 50.0 * 1024 * 1024,
            .kernel_launch_s = 1.5e-6,
            .stream_sync_s = 1.0e-6,
        },
        {
            .name = "a100",
            .description = "NVIDIA A100 SXM4 40GB (analytic profile)",
            .sm_count = 108,
            .max_threads_per_sm = 2048,
            .max_blocks_per_sm = 32,
            .registers_per_sm = 65536,
            .shared_mem_per_sm = 164 * 1024,
            .peak_fp32_flops = 19.5e12,
            .peak_tf32_flops = 156.0e12,
            .peak_fp16_flops = 312.0e12,
            .gemm_efficiency = 0.55,
            .dram_bandwidth = 1.4e12,
            .dram_saturation_sms = 20,
            .warps_to_saturate_sm = 8,
            .l2_bytes = 40.0 * 1024 * 1024,
            .kernel_launch_s = 1.8e-6,
            .stream_sync_s = 1.2e-6,
        },
        {
            .name = "v100",
            .description = "NVIDIA Tesla V100 SXM2 16GB, the IOS paper's GPU (analytic profile)",
            .sm_count = 80,
            .max_threads_per_sm = 2048,
            .max_blocks_per_sm = 32,
            .registers_per_sm = 65536,
            .shared_mem_per_sm = 96 * 1024,
            .peak_fp32_flops = 15.7e12,
            .peak_tf32_flops = 15.7e12,  // no TF32: FP32 convolutions run on CUDA cores
            .peak_fp16_flops = 125.0e12,  // fp16 tensor cores (no bf16: the estimate is fp16's)
            .gemm_efficiency = 0.65,
            .dram_bandwidth = 0.8e12,
            .dram_saturation_sms = 16,
            .warps_to_saturate_sm = 8,
            .l2_bytes = 6.0 * 1024 * 1024,
            .kernel_launch_s = 2.5e-6,
            .stream_sync_s = 1.5e-6,
        },
    };
    return table;
}

}  // namespace

std::vector<std::string> device_profile_names() {
    std::vector<std::string> names;
    for (const auto& p : profiles()) names.push_back(p.name);
    return names;
}

const DeviceProfile& device_profile(const std::string& name) {
    for (const auto& p : profiles())
        if (p.name == name) return p;
    throw Error(fmt::format("unknown device profile '{}'; known profiles: {}", name,
                            fmt::join(device_profile_names(), ", ")));
}

int resident_blocks_per_sm(const DeviceProfile& device, int block_threads, int registers_per_thread,
                           int shared_mem_bytes) {
    if (block_threads <= 0) return 0;
    int fit = device.max_blocks_per_sm;
    fit = std::min(fit, device.max_threads_per_sm / block_threads);
    const int regs = registers_per_block(block_threads, registers_per_thread);
    if (regs > 0) fit = std::min(fit, device.registers_per_sm / regs);
    if (shared_mem_bytes > 0) fit = std::min(fit, device.shared_mem_per_sm / shared_mem_bytes);
    return std::max(fit, 0);
}

double block_sm_share(const DeviceProfile& device, int block_threads, int registers_per_thread,
                      int shared_mem_bytes) {
    const double threads = double(block_threads) / device.max_threads_per_sm;
    const double regs =
        double(registers_per_block(block_threads, registers_per_thread)) / device.registers_per_sm;
    const double smem = double(shared_mem_bytes) / device.shared_mem_per_sm;
    const double slot = 1.0 / device.max_blocks_per_sm;
    return std::min(1.0, std::max({threads, regs, smem, slot}));
}

}  // namespace iostune
