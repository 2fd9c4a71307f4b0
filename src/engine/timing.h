// Timing a captured CUDA graph the way the search and replay measure: warm-up launches, then
// `repeats` timed repeats of `number` back-to-back launches between two CUDA events.
//
// A sample is the GPU time of one repeat divided by `number`: the per-launch GPU time. Two ways
// to lay the repeats out (MeasureOptions::mode):
// - EachRepeat: every repeat starts on an idle stream and ends in a synchronisation, so its
//   window also holds the first launch's trip from the host (a few microseconds, spread over
//   `number` launches). End-to-end replay timings use it; their graphs last milliseconds.
// - BackToBack: every repeat is enqueued at once behind one chain of events (event r closes
//   repeat r-1 and opens repeat r) and the host synchronises once at the end. Launches then
//   follow each other on the GPU without the host in between, which is how a stage runs inside
//   a replayed schedule's graph, so a window is `number` periods of steady back-to-back
//   execution: the stage's kernels plus the device-side gap to the next launch, nothing of the
//   host. (Should the host fall behind the GPU, a window would wait for it; the first repeat
//   may, and the median drops it; a stage shorter than the host's launch call would in every
//   repeat, in either mode, and then enqueue_median_ms >= median_ms says so.) The calibration of
//   `number` comes from the warm-up launches, timed through their own event chain, instead of
//   synchronised trial repeats. The search's stage measurements use it: one synchronisation per
//   stage instead of one per repeat.
// - Cold: like BackToBack, but a RepeatPrologue (an L2 flush) given to measure_graph runs before
//   every repeat, outside its window: the stage meets caches as cold as in a whole schedule
//   whose weights do not fit in L2, instead of the warm L2 of its own previous launch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "src/engine/cuda_event.h"
#include "src/engine/cuda_graph.h"

namespace iostune {

enum class RepeatMode { EachRepeat, BackToBack, Cold };

struct MeasureOptions {
    int warmup = 10;           // launches before timing starts (discarded)
    int repeats = 50;          // timed samples
    int number = 1;            // graph launches per timed repeat; each sample is their mean
    double min_repeat_ms = 0;  // if > 0, `number` grows until one repeat lasts at least this long
    // Warm-up also lasts at least this long (wall time): an idle GPU needs a moment of steady work
    // before its clocks settle, and a few launches of a 2 ms graph are not enough.
    double min_warmup_ms = 0;
    RepeatMode mode = RepeatMode::EachRepeat;  // see the file comment
};

// What the cold mode enqueues before each repeat (an L2 flush).
using RepeatPrologue = std::function<void(cudaStream_t)>;

struct LatencyStats {
    std::vector<double> samples_ms;  // GPU time per launch, one entry per repeat
    // Host time to enqueue one launch (the repeat's cudaGraphLaunch calls / number), one entry
    // per repeat. The same in both modes: in BackToBack the calls run while the GPU works
    // through earlier repeats, which the host-side call does not wait for.
    std::vector<double> enqueue_ms;
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

// Launches per repeat so that one repeat of launches lasting `per_launch_ms` each lasts at
// least `min_repeat_ms`, with 10% to spare; never fewer than `number`. Times below 0.1 us count
// as 0.1 us, so a bogus zero cannot ask for millions of launches.
int launches_per_repeat(double per_launch_ms, int number, double min_repeat_ms);

// Seconds `graphs` timings with `options` take when a launch lasts about `per_launch_ms`
// (warm-up, then the repeats; min_repeat_ms's growth of `number` is not counted).
double timing_seconds(const MeasureOptions& options, int graphs, double per_launch_ms);
// `options` with its repeats cut so that `graphs` timings fit `budget_s`, never below
// `min_repeats` (a median needs samples, even past the budget) nor above options.repeats. A
// search's last timings use it: 200 repeats of NASNet-A's 14 ms graphs at batch 16, seven times,
// take about 20 s of a 60 s budget.
MeasureOptions repeats_within(MeasureOptions options, double budget_s, int graphs,
                              double per_launch_ms, int min_repeats);

// Timing events kept for reuse: a search measures a hundred thousand stages, each needing about
// twenty events, and creating one costs microseconds. Events belong to the device current when
// they are made; one pool serves one device.
class TimingEvents {
public:
    // At least `count` events with timing enabled (the first `count` are the ones to use).
    const std::vector<CudaEvent>& at_least(size_t count);

private:
    std::vector<CudaEvent> events_;
};

LatencyStats measure_graph(const CudaGraphExec& exec, cudaStream_t stream,
                           const MeasureOptions& options, TimingEvents& events,
                           const RepeatPrologue& before_each_repeat = {});
// The same with events of its own.
LatencyStats measure_graph(const CudaGraphExec& exec, cudaStream_t stream,
                           const MeasureOptions& options = {});

// Several graphs timed in turns, as EachRepeat times one (`options.mode` and `min_repeat_ms` are
// not used): each round takes `per_turn` samples of every graph in turn, so a drift of the GPU's
// clocks or of other load over the seconds a measurement lasts weighs on all of them alike,
// which two measurements one after the other do not ensure. With per_turn > 1 each turn starts
// with a launch not timed: the first launch after another graph's runs slower, by more than
// the difference between two schedules of a short model (GoogLeNet b1, 0.24 ms: 2-7% more,
// most for staged forms; call147), and replay launches one graph again and again.
std::vector<LatencyStats> measure_interleaved(const std::vector<const CudaGraphExec*>& execs,
                                              cudaStream_t stream, const MeasureOptions& options,
                                              int per_turn = 1);

}  // namespace iostune
