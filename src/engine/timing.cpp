#include "src/engine/timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "src/error.h"

namespace iostune {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double percentile(const std::vector<double>& sorted, double p) {
    const double pos = p * double(sorted.size() - 1);
    const size_t lo = size_t(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

// Keeps launching until `min_warmup_ms` of wall time have passed since `start`.
void extend_warm_up(const CudaGraphExec& exec, cudaStream_t stream, double min_warmup_ms,
                    Clock::time_point start) {
    while (ms_since(start) < min_warmup_ms) {
        for (int i = 0; i < 10; ++i) exec.launch(stream);
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "finishing the warm-up launches");
    }
}

struct Repeat {
    double gpu_ms_per_launch;
    double enqueue_ms_per_launch;
};

// One synchronised repeat: `start` on an idle stream, `number` launches, `stop`, wait.
Repeat time_repeat(const CudaGraphExec& exec, cudaStream_t stream, int number,
                   const CudaEvent& start, const CudaEvent& stop) {
    start.record(stream);
    const auto host_start = Clock::now();
    for (int i = 0; i < number; ++i) exec.launch(stream);
    const double enqueue_ms = ms_since(host_start);
    stop.record(stream);
    stop.synchronize();
    return {double(stop.elapsed_ms_since(start)) / number, enqueue_ms / number};
}

LatencyStats measure_each_repeat(const CudaGraphExec& exec, cudaStream_t stream,
                                 const MeasureOptions& options, TimingEvents& pool) {
    const std::vector<CudaEvent>& events = pool.at_least(2);
    const CudaEvent& start = events[0];
    const CudaEvent& stop = events[1];
    const auto warmup_start = Clock::now();
    for (int i = 0; i < options.warmup; ++i) exec.launch(stream);
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "finishing the warm-up launches");
    extend_warm_up(exec, stream, options.min_warmup_ms, warmup_start);

    int number = options.number;
    if (options.min_repeat_ms > 0) {
        // Grow `number` until one repeat is long enough for the event timer's resolution.
        for (int tries = 0; tries < 20; ++tries) {
            const Repeat r = time_repeat(exec, stream, number, start, stop);
            if (r.gpu_ms_per_launch * number >= options.min_repeat_ms) break;
            number = std::max(number * 2,
                              launches_per_repeat(r.gpu_ms_per_launch, number, options.min_repeat_ms));
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

LatencyStats measure_back_to_back(const CudaGraphExec& exec, cudaStream_t stream,
                                  const MeasureOptions& options, TimingEvents& pool) {
    // Calibrating `number` needs at least one timed launch; it is a warm-up launch all the same.
    const int warm = std::max(options.warmup, options.min_repeat_ms > 0 ? 1 : 0);
    const std::vector<CudaEvent>& ev = pool.at_least(size_t(std::max(warm, options.repeats)) + 1);

    // Warm-up launches, each closed by an event of one chain: their times choose `number`.
    const auto warmup_start = Clock::now();
    ev[0].record(stream);
    for (int i = 0; i < warm; ++i) {
        exec.launch(stream);
        ev[size_t(i) + 1].record(stream);
    }
    ev[size_t(warm)].synchronize();
    // The fastest launch after the first (which uploads the graph to the device); a launch the
    // host was late for only looks slower, and a too small `number` is caught below.
    double per_launch_ms = 0;
    for (int i = warm > 1 ? 1 : 0; i < warm; ++i) {
        const double t = ev[size_t(i) + 1].elapsed_ms_since(ev[size_t(i)]);
        per_launch_ms = per_launch_ms == 0 ? t : std::min(per_launch_ms, t);
    }
    extend_warm_up(exec, stream, options.min_warmup_ms, warmup_start);

    int number = options.number;
    if (options.min_repeat_ms > 0)
        number = launches_per_repeat(per_launch_ms, number, options.min_repeat_ms);

    const size_t repeats = size_t(options.repeats);
    constexpr int kMaxTries = 3;
    for (int attempt = 1;; ++attempt) {
        std::vector<double> samples(repeats), enqueue(repeats);
        ev[0].record(stream);
        for (size_t r = 0; r < repeats; ++r) {
            const auto host_start = Clock::now();
            for (int i = 0; i < number; ++i) exec.launch(stream);
            enqueue[r] = ms_since(host_start) / number;
            ev[r + 1].record(stream);
        }
        ev[repeats].synchronize();
        for (size_t r = 0; r < repeats; ++r)
            samples[r] = double(ev[r + 1].elapsed_ms_since(ev[r])) / number;
        LatencyStats stats = summarize(std::move(samples), std::move(enqueue), number);
        // The GPU ran faster than during warm-up (clocks still rising): the repeats were too
        // short for the event timer, so they are timed again with more launches each.
        if (options.min_repeat_ms <= 0 || stats.median_ms * number >= options.min_repeat_ms ||
            attempt == kMaxTries)
            return stats;
        number = launches_per_repeat(stats.median_ms, number, options.min_repeat_ms);
    }
}

// Every repeat is `number` launches between its own pair of events, the hook enqueued before
// it; everything is enqueued at once and the host synchronises at the end.
LatencyStats measure_cold(const CudaGraphExec& exec, cudaStream_t stream,
                          const MeasureOptions& options, TimingEvents& pool,
                          const RepeatPrologue& before_each_repeat) {
    if (!before_each_repeat)
        throw Error("measure_graph: the cold mode needs a prologue to run before each repeat");
    const size_t repeats = size_t(options.repeats);
    const std::vector<CudaEvent>& ev = pool.at_least(2 * repeats);
    for (int i = 0; i < options.warmup; ++i) {
        before_each_repeat(stream);
        exec.launch(stream);
    }
    std::vector<double> samples(repeats), enqueue(repeats);
    for (size_t r = 0; r < repeats; ++r) {
        before_each_repeat(stream);
        ev[2 * r].record(stream);
        const auto host_start = Clock::now();
        for (int i = 0; i < options.number; ++i) exec.launch(stream);
        enqueue[r] = ms_since(host_start) / options.number;
        ev[2 * r + 1].record(stream);
    }
    ev[2 * repeats - 1].synchronize();
    for (size_t r = 0; r < repeats; ++r)
        samples[r] = double(ev[2 * r + 1].elapsed_ms_since(ev[2 * r])) / options.number;
    return summarize(std::move(samples), std::move(enqueue), options.number);
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

int launches_per_repeat(double per_launch_ms, int number, double min_repeat_ms) {
    const double per_launch = std::max(per_launch_ms, 1e-4);
    if (per_launch * number >= min_repeat_ms) return number;
    return std::max(number, int(std::ceil(min_repeat_ms / per_launch * 1.1)));
}

double timing_seconds(const MeasureOptions& options, int graphs, double per_launch_ms) {
    const double per_launch = std::max(per_launch_ms, 1e-4);  // as launches_per_repeat
    const double warmup_ms = std::max(options.warmup * per_launch, options.min_warmup_ms);
    return graphs * (warmup_ms + options.repeats * std::max(options.number, 1) * per_launch) / 1e3;
}

MeasureOptions repeats_within(MeasureOptions options, double budget_s, int graphs,
                              double per_launch_ms, int min_repeats) {
    if (graphs <= 0 || !(budget_s < std::numeric_limits<double>::infinity())) return options;
    const int most = options.repeats;
    options.repeats = 0;
    const double left_s = budget_s - timing_seconds(options, graphs, per_launch_ms);  // warm-ups
    const double repeat_s = timing_seconds({0, 1, options.number, 0, 0}, graphs, per_launch_ms);
    const double fits = left_s > 0 ? std::floor(left_s / repeat_s) : 0.0;
    options.repeats = int(std::clamp(fits, double(std::min(min_repeats, most)), double(most)));
    return options;
}

const std::vector<CudaEvent>& TimingEvents::at_least(size_t count) {
    events_.reserve(count);
    while (events_.size() < count) events_.emplace_back(CudaEvent::Timing::Enabled);
    return events_;
}

namespace {

void require_timeable(const CudaGraphExec* exec, const MeasureOptions& options, const char* who) {
    if (exec == nullptr || !exec->valid())
        throw Error(fmt::format("{}: the CUDA graph exec is empty", who));
    if (options.repeats < 1 || options.number < 1 || options.warmup < 0)
        throw Error(fmt::format("{}: need repeats >= 1, number >= 1, warmup >= 0 (got "
                                "repeats={}, number={}, warmup={})",
                                who, options.repeats, options.number, options.warmup));
}

}  // namespace

LatencyStats measure_graph(const CudaGraphExec& exec, cudaStream_t stream,
                           const MeasureOptions& options, TimingEvents& events,
                           const RepeatPrologue& before_each_repeat) {
    require_timeable(&exec, options, "measure_graph");
    switch (options.mode) {
        case RepeatMode::BackToBack: return measure_back_to_back(exec, stream, options, events);
        case RepeatMode::Cold:
            return measure_cold(exec, stream, options, events, before_each_repeat);
        case RepeatMode::EachRepeat: break;
    }
    return measure_each_repeat(exec, stream, options, events);
}

LatencyStats measure_graph(const CudaGraphExec& exec, cudaStream_t stream,
                           const MeasureOptions& options) {
    TimingEvents events;
    return measure_graph(exec, stream, options, events);
}

std::vector<LatencyStats> measure_interleaved(const std::vector<const CudaGraphExec*>& execs,
                                              cudaStream_t stream, const MeasureOptions& options,
                                              int per_turn) {
    if (execs.empty()) throw Error("measure_interleaved: no CUDA graphs to time");
    if (per_turn < 1)
        throw Error(fmt::format("measure_interleaved: per_turn must be >= 1 (got {})", per_turn));
    for (const CudaGraphExec* exec : execs) require_timeable(exec, options, "measure_interleaved");
    TimingEvents pool;
    const std::vector<CudaEvent>& events = pool.at_least(2);
    const auto warmup_start = Clock::now();
    for (int i = 0; i < options.warmup; ++i)
        for (const CudaGraphExec* exec : execs) exec->launch(stream);
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "finishing the warm-up launches");
    extend_warm_up(*execs.front(), stream, options.min_warmup_ms, warmup_start);
    std::vector<std::vector<double>> samples(execs.size()), enqueue(execs.size());
    for (int r = 0; r < options.repeats; r += per_turn) {
        const int samples_now = std::min(per_turn, options.repeats - r);
        for (size_t k = 0; k < execs.size(); ++k) {
            if (per_turn > 1) {  // the first launch after another graph's: not timed
                execs[k]->launch(stream);
                IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "finishing an untimed launch");
            }
            for (int i = 0; i < samples_now; ++i) {
                const Repeat t =
                    time_repeat(*execs[k], stream, options.number, events[0], events[1]);
                samples[k].push_back(t.gpu_ms_per_launch);
                enqueue[k].push_back(t.enqueue_ms_per_launch);
            }
        }
    }
    std::vector<LatencyStats> stats;
    for (size_t k = 0; k < execs.size(); ++k)
        stats.push_back(summarize(std::move(samples[k]), std::move(enqueue[k]), options.number));
    return stats;
}

}  // namespace iostune
