#include "src/engine/timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "src/engine/cuda_event.h"
#include "src/error.h"

namespace iostune {
namespace {

double percentile(const std::vector<double>& sorted, double p) {
    const double pos = p * double(sorted.size() - 1);
    const size_t lo = size_t(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

struct Repeat {
    double gpu_ms_per_launch;
    double enqueue_ms_per_launch;
};

Repeat time_repeat(const CudaGraphExec& exec, cudaStream_t stream, int number,
                   const CudaEvent& start, const CudaEvent& stop) {
    start.record(stream);
    const auto host_start = std::chrono::steady_clock::now();
    for (int i = 0; i < number; ++i) exec.launch(stream);
    const auto host_stop = std::chrono::steady_clock::now();
    stop.record(stream);
    stop.synchronize();
    const double enqueue_ms =
        std::chrono::duration<double, std::milli>(host_stop - host_start).count();
    return {double(stop.elapsed_ms_since(start)) / number, enqueue_ms / number};
}

}  // namespace

LatencyStats summarize(std::vector<double> samples_ms, std::vector<double> enqueue_ms, int number) {
    if (samples_ms.empty()) throw Error("summarize: no latency samples to summarize");
    LatencyStats stats;
    stats.number = number;
    std::vector<double> sorted = samples_ms;
    std::sort(sorted.begin(), sorted.end());
    const double n = double(sorted.size());
    stats.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
    double sq = 0;
    for (double s : sorted) sq += (s - stats.mean_ms) * (s - stats.mean_ms);
    stats.stddev_ms = std::sqrt(sq / n);
    stats.min_ms = sorted.front();
    stats.max_ms = sorted.back();
    stats.median_ms = percentile(sorted, 0.5);
    stats.p10_ms = percentile(sorted, 0.10);
    stats.p90_ms = percentile(sorted, 0.90);
    stats.p95_ms = percentile(sorted, 0.95);
    stats.p99_ms = percentile(sorted, 0.99);
    if (!enqueue_ms.empty()) {
        std::vector<double> e = enqueue_ms;
        std::sort(e.begin(), e.end());
        stats.enqueue_median_ms = percentile(e, 0.5);
    }
    stats.samples_ms = std::move(samples_ms);
    stats.enqueue_ms = std::move(enqueue_ms);
    return stats;
}

LatencyStats measure_graph(const CudaGraphExec& exec, cudaStream_t stream,
                           const MeasureOptions& options) {
    if (!exec.valid()) throw Error("measure_graph: the CUDA graph exec is empty");
    if (options.repeats < 1 || options.number < 1 || options.warmup < 0) {
        throw Error(fmt::format("measure_graph: need repeats >= 1, number >= 1, warmup >= 0 "
                                "(got repeats={}, number={}, warmup={})",
                                options.repeats, options.number, options.warmup));
    }
    const CudaEvent start(CudaEvent::Timing::Enabled);
    const CudaEvent stop(CudaEvent::Timing::Enabled);
    const auto warmup_start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.warmup; ++i) exec.launch(stream);
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "finishing the warm-up launches");
    auto warmed_ms = [&] {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                         warmup_start).count();
    };
    while (warmed_ms() < options.min_warmup_ms) {
        for (int i = 0; i < 10; ++i) exec.launch(stream);
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "finishing the warm-up launches");
    }

    int number = options.number;
    if (options.min_repeat_ms > 0) {
        // Grow `number` until one repeat is long enough for the event timer's resolution.
        for (int tries = 0; tries < 20; ++tries) {
            const Repeat r = time_repeat(exec, stream, number, start, stop);
            if (r.gpu_ms_per_launch * number >= options.min_repeat_ms) break;
            const double want = options.min_repeat_ms / std::max(r.gpu_ms_per_launch, 1e-4);
            number = std::max(number * 2, int(std::ceil(want * 1.1)));
        }
    }
    std::vector<double> samples, enqueue;
    samples.reserve(size_t(options.repeats));
    enqueue.reserve(size_t(options.repeats));
    for (int i = 0; i < options.repeats; ++i) {
        const Repeat r = time_repeat(exec, stream, number, start, stop);
        samples.push_back(r.gpu_ms_per_launch);
        enqueue.push_back(r.enqueue_ms_per_launch);
    }
    return summarize(std::move(samples), std::move(enqueue), number);
}

}  // namespace iostune
