#include "iostune/batch_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "src/error.h"

namespace iostune {

std::vector<int> tuned_batch_sizes(std::vector<int> batch_sizes) {
    if (batch_sizes.empty())
        throw Error("no batch sizes given; pass the batch sizes the model was tuned for, e.g. 1,4,16",
                    ErrorKind::BadInput);
    for (int b : batch_sizes)
        if (b <= 0)
            throw Error(fmt::format("batch sizes must be positive, got {} in [{}]", b,
                                    fmt::join(batch_sizes, ", ")),
                        ErrorKind::BadInput);
    std::sort(batch_sizes.begin(), batch_sizes.end());
    batch_sizes.erase(std::unique(batch_sizes.begin(), batch_sizes.end()), batch_sizes.end());
    return batch_sizes;
}

std::vector<BatchChunk> plan_batch_request(const std::vector<int>& tuned, int n) {
    if (n < 1)
        throw Error(fmt::format("a request needs at least one item, got a batch of {}", n),
                    ErrorKind::BadInput);
    if (tuned.empty()) throw Error("no tuned batch sizes to plan a request on", ErrorKind::BadInput);
    const int largest = tuned.back();
    std::vector<BatchChunk> chunks;
    int offset = 0;
    // Whole chunks of the largest graph first: each runs without padding.
    for (; n - offset > largest; offset += largest) chunks.push_back({largest, offset, largest});
    const int rest = n - offset;
    const int fits = *std::lower_bound(tuned.begin(), tuned.end(), rest);
    chunks.push_back({fits, offset, rest});
    return chunks;
}

}  // namespace iostune
