// Timing a captured CUDA graph the way the search and replay measure: warm-up launches, then
// `repeats` timed repeats of `number` back-to-back launches between two CUDA events.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "src/engine/cuda_graph.h"

namespace iostune {

struct MeasureOptions {
    int warmup = 10;           // launches before timing starts (discarded)
    int repeats = 50;          // timed samples
    int number = 1;            // graph launches per timed repeat; each sample is their mean
    double min_repeat_ms = 0;  // if > 0, `number` grows until one repeat lasts at least this long
    // Warm-up also lasts at least this long (wall time): an idle GPU needs a moment of steady work
    // before its clocks settle, and a few launches of a 2 ms graph are not enough.
    double min_warmup_ms = 0;
};

struct LatencyStats {
    std::vector<double> samples_ms;  // GPU time per launch, one entry per repeat
    std::vector<double> enqueue_ms;  // host time to enqueue one launch, one entry per repeat
    int number = 1;                  // launches per repeat actually used
    double median_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0;
    double p10_ms = 0, p90_ms = 0, p95_ms = 0, p99_ms = 0, stddev_ms = 0;
    double enqueue_median_ms = 0;
    // stddev / mean: a noisy measurement has a high coefficient of variation.
    double cv() const { return mean_ms > 0 ? stddev_ms / mean_ms : 0.0; }
};

// Summary statistics of samples (percentiles by linear interpolation between order statistics).
// Throws iostune::Error if `samples_ms` is empty.
LatencyStats summarize(std::vector<double> samples_ms, std::vector<double> enqueue_ms, int number);

LatencyStats measure_graph(const CudaGraphExec& exec, cudaStream_t stream,
                           const MeasureOptions& options = {});

}  // namespace iostune
