// How a request of any batch size runs on the batch sizes a model was tuned for (one captured
// CUDA Graph each, iostune/batch_replayer.h): on the smallest tuned size that holds it, its
// input padded and its output trimmed; a request larger than the largest tuned size in chunks of
// the largest, the rest on the smallest tuned size that holds the rest.
//
//   tuned {1, 4, 16}:  n = 3  -> [graph 4: items 0-2 (1 padded)]
//                      n = 37 -> [graph 16: 0-15] [graph 16: 16-31] [graph 16: 32-36 (11 padded)]
//
// Plain C++17 data and arithmetic, no CUDA: the plan is the same on every machine.
#pragma once

#include <vector>

namespace iostune {

// Items [offset, offset + count) of a request run on the graph captured for batch `tuned`
// (count <= tuned; the other tuned - count items of its input are padding).
struct BatchChunk {
    int tuned = 0;
    int offset = 0;
    int count = 0;
    int padding() const { return tuned - count; }
};

// Sorted, without duplicates. Throws iostune::Error (bad input) for an empty list or a size
// that is not positive.
std::vector<int> tuned_batch_sizes(std::vector<int> batch_sizes);

// The chunks of a request of `n` items (n >= 1) on `tuned` (as tuned_batch_sizes() returns it),
// in item order. Throws iostune::Error (bad input) for n < 1.
std::vector<BatchChunk> plan_batch_request(const std::vector<int>& tuned, int n);

}  // namespace iostune
