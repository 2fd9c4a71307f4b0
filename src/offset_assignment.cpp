#include "src/offset_assignment.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace iostune {

namespace {

int64_t round_up(int64_t bytes, int64_t alignment) {
    return (bytes + alignment - 1) / alignment * alignment;
}

struct Interval {
    int64_t begin = 0, end = 0;
};

// The best-fitting gap for `size` among `taken` (sorted by begin), or the end of the last.
int64_t best_fit(const std::vector<Interval>& taken, int64_t size) {
    int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max();
    int64_t end = 0;  // where the buffers placed so far (in offset order) end
    for (const Interval& t : taken) {
        const int64_t gap = t.begin - end;
        if (gap >= size && gap < best_gap) {
            best = end;
            best_gap = gap;
        }
        end = std::max(end, t.end);
    }
    return best >= 0 ? best : end;
}

}  // namespace

OffsetAssignment assign_offsets_greedy_by_size(const std::vector<int64_t>& sizes,
                                               const std::function<bool(int, int)>& conflict,
                                               int64_t alignment) {
    const size_t n = sizes.size();
    std::vector<int64_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = round_up(std::max<int64_t>(sizes[i], 0), alignment);
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return bytes[size_t(a)] > bytes[size_t(b)]; });

    OffsetAssignment result;
    result.offsets.assign(n, 0);
    std::vector<int> placed;
    std::vector<Interval> taken;
    for (int id : order) {
        taken.clear();
        for (int other : placed)
            if (conflict(id, other))
                taken.push_back({result.offsets[size_t(other)],
                                 result.offsets[size_t(other)] + bytes[size_t(other)]});
        std::sort(taken.begin(), taken.end(),
                  [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
        const int64_t offset = best_fit(taken, bytes[size_t(id)]);
        result.offsets[size_t(id)] = offset;
        result.total_bytes = std::max(result.total_bytes, offset + bytes[size_t(id)]);
        placed.push_back(id);
    }
    return result;
}

}  // namespace iostune
