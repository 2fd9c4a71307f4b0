// Plain copies of the CUPTI activity records iostune uses, detached from CUPTI's buffers.
#pragma once

#include <cstdint>
#include <string>

namespace iostune {

struct KernelRecord {
    std::string name;
    uint64_t start_ns = 0, end_ns = 0;
    int grid_x = 0, grid_y = 0, grid_z = 0;
    int block_x = 0, block_y = 0, block_z = 0;
    int registers_per_thread = 0;
    int static_shared_bytes = 0, dynamic_shared_bytes = 0;
    uint32_t stream_id = 0;
    uint32_t correlation_id = 0;
    uint64_t graph_node_id = 0;  // non-zero for kernels launched from a CUDA graph
    int64_t op_id = -1;          // operator that launched it (external correlation), -1 if none

    double duration_us() const { return double(end_ns - start_ns) / 1e3; }
    int64_t threads_per_block() const { return int64_t(block_x) * block_y * block_z; }
    int64_t blocks() const { return int64_t(grid_x) * grid_y * grid_z; }
};

enum class TransferKind { Memcpy, Memset };

struct TransferRecord {
    TransferKind kind = TransferKind::Memcpy;
    std::string what;  // e.g. "DtoD", "HtoD", "memset"
    uint64_t bytes = 0;
    uint64_t start_ns = 0, end_ns = 0;
    uint32_t stream_id = 0;
    uint32_t correlation_id = 0;
    int64_t op_id = -1;

    double duration_us() const { return double(end_ns - start_ns) / 1e3; }
};

}  // namespace iostune
