// `iostune replay --batch-sizes 1,4,16 [--requests 3,20]`: one CUDA Graph per tuned batch size
// (iostune/batch_replayer.h) and requests of any size timed on them, padded or in chunks.
#pragma once

#include <string>
#include <vector>

#include "iostune/replay.h"

namespace iostune::cli {

struct BatchReplayRequest {
    std::string model;
    std::vector<int> batch_sizes;  // the tuned sizes: one graph each
    std::vector<int> requests;     // request sizes to time; empty: the tuned sizes
    ReplayOptions options;         // everything but the batch
    int iterations = 200;
    int warmup = 20;
    bool validate = false;  // each tuned graph against the sequential schedule first
    std::string format = "table";
};

void run_batch_replay(const BatchReplayRequest& request);

}  // namespace iostune::cli
