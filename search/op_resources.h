// The resource demand of each op on a GPU: what Opara's launch order and the reports use.
//
// Filled by the profiler from CUPTI kernel records on the target GPU (measured = true), or
// estimated by the analytic model (search/op_estimate.h, measured = false). For an op that runs
// several kernels, the launch shape fields describe its largest kernel (most thread blocks) and
// the time covers all of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace iostune {

struct OpResources {
    int64_t grid_blocks = 0;        // thread blocks of the largest kernel
    int block_threads = 0;          // threads per block
    int registers_per_thread = 0;
    int shared_mem_bytes = 0;       // per block, static + dynamic
    double occupancy = 0.0;         // theoretical: resident warps / max warps of an SM, 0..1
    double block_sm_share = 0.0;    // fraction of one SM a block claims (dominant resource)
    double kernel_time_ms = 0.0;    // all kernels of the op, back to back
    int kernels = 0;                // kernel launches the op makes
    bool compute_bound = false;     // false: memory-bound (Opara's memory-intensive list)
    bool measured = false;          // true: from the profiler; false: analytic estimate
};

// One entry per op id of a graph.
struct OpResourceTable {
    std::string source;  // where the numbers came from, e.g. "sim:h100" or the GPU's name
    std::vector<OpResources> ops;

    // Throws iostune::Error when the table has no entry for the op.
    const OpResources& at(int op_id) const;
};

}  // namespace iostune
