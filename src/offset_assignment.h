// Offsets for buffers in one region so that buffers whose lifetimes conflict never share a byte:
// TFLite's "greedy by size" offset calculation (tensorflow/lite/delegates/gpu/common/
// memory_management/greedy_by_size_assignment.cc; Pisarchyk and Lee, "Efficient Memory
// Management for Deep Neural Net Inference", 2020), as TensorRT's and TFLite's planners use:
// buffers are placed largest first, each at the smallest gap between the already placed buffers
// it conflicts with that fits it, or after the last of them when no gap does. Equal sizes go in
// two orders, by id and by how many buffers each conflicts with (most first), and the smaller
// region is kept (ties: by id), so the result is deterministic.
//
// TFLite decides conflicts by usage intervals in one sequential order; here the caller decides
// (the memory planner: whether every access of one buffer happens before every access of the
// other in the schedule's stream program), so concurrent launches are handled the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace iostune {

struct OffsetAssignment {
    std::vector<int64_t> offsets;  // one per buffer, multiples of the alignment
    int64_t total_bytes = 0;       // the region: the largest offset + size
};

// `sizes` in bytes (each rounded up to `alignment`); `conflict(a, b)` must be symmetric.
OffsetAssignment assign_offsets_greedy_by_size(const std::vector<int64_t>& sizes,
                                               const std::function<bool(int, int)>& conflict,
                                               int64_t alignment);

}  // namespace iostune
