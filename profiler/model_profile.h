// Per-operator profile of a model on the current GPU: the model is run op by op in one
// topological order (each op alone on the stream, so its kernels are measured in isolation),
// with CUPTI recording every kernel and attributing it to its operator.
#pragma once

#include <string>
#include <vector>

#include "profiler/activity_collector.h"
#include "profiler/device_ceilings.h"
#include "profiler/roofline.h"
#include "src/engine/device_info.h"
#include "src/engine/engine.h"

namespace iostune {

// One kernel of an op's run, in launch order: its median duration over the measured runs.
struct KernelTime {
    std::string name;
    double us = 0;
};

struct OpProfile {
    int op_id = 0;
    std::string name;
    OpKind kind = OpKind::Identity;
    // The op's geometry, so results can be reproduced outside iostune (scripts/bench/op_parity.py).
    OpAttrs attrs;
    std::vector<int> inputs;  // producer op ids, or graph inputs (< 0)
    std::vector<Shape> input_shapes;
    Shape output;
    double latency_us = 0;  // median over iterations of the op's kernel + transfer time
    int kernels = 0;        // kernels launched per run
    int transfers = 0;      // memcpy/memset per run
    // Resource demand of the op's longest kernel (what launch-order heuristics use).
    std::string main_kernel;
    std::string grid, block;
    int64_t blocks = 0, threads_per_block = 0;
    int registers_per_thread = 0;
    int64_t shared_bytes = 0;
    double occupancy = 0;  // theoretical, 0..1
    std::string occupancy_limited_by;
    int64_t flops = 0, bytes = 0;
    double intensity = 0;  // FLOPs per byte
    bool compute_bound = false;
    RooflineBound roofline;          // its bound at the measured ceilings and the fraction achieved
    std::vector<KernelTime> kernel_times;  // empty if the runs launched different kernel counts
    std::string engine_path;        // how the engine ran it (OpPlan::path)
    std::string engine_algorithms;  // its cuDNN algorithm(s) and math type (OpPlan::algorithms)
    std::string engine_candidates;  // how they were chosen (OpPlan::candidates)
};

struct ProfileOptions {
    int iterations = 5;  // measured runs after one warm-up run
    bool measure_ceilings = true;
};

struct ModelProfile {
    std::string model;
    int batch = 0;
    Precision precision = Precision::Tf32;
    TensorLayout layout = TensorLayout::Nchw;
    DeviceInfo device;
    DeviceCeilings ceilings;  // zero if not measured
    std::vector<OpProfile> ops;
    int iterations = 0;
    double op_sum_us = 0;           // sum of the ops' isolated latencies
    double span_us = 0;             // median of (last kernel end - first kernel start) per run
    double gpu_busy_fraction = 0;   // time some kernel/transfer runs / span
    double critical_path_us = 0;    // longest dependency path, weighted by isolated latency
    ActivityTrace last_run;         // records of the last measured run (for traces)
};

// Sets a seeded random input (so no kernel is timed on zeros), runs every op once to warm up,
// then `options.iterations` measured runs of the ops one by one.
ModelProfile profile_model(Engine& engine, const ProfileOptions& options = {});

}  // namespace iostune
