// Named analytic descriptions of GPUs, the simulated cost model's view of a device.
//
// Numbers are public spec-sheet figures (SM count, limits, peaks) plus a few measured-style
// constants (sustained DRAM bandwidth, per-kernel launch gap and stream-join cost inside a CUDA
// Graph). Everything derived from a profile is an estimate and must be labelled as one.
#pragma once

#include <string>
#include <vector>

namespace iostune {

struct DeviceProfile {
    std::string name;  // short key, e.g. "h100"
    std::string description;

    int sm_count = 0;
    int max_threads_per_sm = 0;
    int max_blocks_per_sm = 0;
    int registers_per_sm = 0;
    int shared_mem_per_sm = 0;  // bytes usable by resident blocks

    double peak_fp32_flops = 0.0;  // CUDA-core FP32, FLOP/s (a multiply-add counts as 2)
    double peak_tf32_flops = 0.0;  // tensor-core TF32, dense; equals FP32 where there is none
    double peak_fp16_flops = 0.0;  // tensor-core fp16/bf16 with fp32 accumulation, dense
    // Fraction of the peak a tuned convolution/GEMM kernel sustains once it fills the machine.
    double gemm_efficiency = 0.0;
    double dram_bandwidth = 0.0;  // sustained (measured-style), bytes/s
    // SMs needed to saturate DRAM; fewer active SMs draw proportionally less bandwidth.
    int dram_saturation_sms = 0;
    // Resident warps an SM needs to reach its peak; fewer (a lone small block) run slower.
    int warps_to_saturate_sm = 0;
    double l2_bytes = 0.0;

    double kernel_launch_s = 0.0;  // per kernel node, back to back, inside a CUDA Graph
    double stream_sync_s = 0.0;    // per extra stream of a stage: event fork + join

    // Bandwidth one SM can draw on its own.
    double per_sm_bandwidth() const { return dram_bandwidth / double(dram_saturation_sms); }
};

// Names of the built-in profiles, in display order.
std::vector<std::string> device_profile_names();

// The built-in profile with that name; throws iostune::Error naming the valid ones otherwise.
const DeviceProfile& device_profile(const std::string& name);

// Thread blocks of this shape that fit on one SM at once (threads, registers, shared memory,
// block slots); 0 when one block does not fit.
int resident_blocks_per_sm(const DeviceProfile& device, int block_threads, int registers_per_thread,
                           int shared_mem_bytes);

// Fraction of one SM that a single thread block claims, by its dominant resource (threads,
// registers, shared memory or a block slot): Opara's per-block resource demand.
double block_sm_share(const DeviceProfile& device, int block_threads, int registers_per_thread,
                      int shared_mem_bytes);

}  // namespace iostune
