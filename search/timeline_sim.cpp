#include "search/timeline_sim.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "search/op_estimate.h"
#include "src/error.h"

namespace iostune {

namespace {

struct Work {
    double alone_s = 0;  // its kernels back to back on an idle machine, launches included
    double demand = 0;   // the fraction of the machine it needs while it runs alone
};

Work launch_work(const Graph& graph, const Launch& launch, const SimCostModel& model) {
    std::vector<KernelEstimate> kernels;
    if (launch.merge) kernels.push_back(merged_conv_kernel(graph, launch.ops));
    else kernels = op_kernels(graph, launch.ops[0]);
    Work w;
    double machine_s = 0;
    for (const KernelEstimate& k : kernels) {
        const KernelTiming t = time_kernel(k, model.device(), model.precision());
        w.alone_s += t.time_s;
        machine_s += std::max(t.machine_flops_s, t.machine_bytes_s);
    }
    w.demand = w.alone_s > 0 ? std::clamp(machine_s / w.alone_s, 0.0, 1.0) : 0.0;
    return w;
}

}  // namespace

double simulate_program_ms(const Graph& graph, const StreamProgram& program,
                           const SimCostModel& model) {
    constexpr double kNever = std::numeric_limits<double>::infinity();
    const auto& launches = program.launches();
    const size_t n = launches.size();
    std::vector<Work> work(n);
    std::vector<std::vector<int>> successors(n);
    std::vector<int> unfinished_preds(n, 0);
    std::vector<int> lane_tail(size_t(program.lane_count()), -1);
    for (size_t i = 0; i < n; ++i) {
        work[i] = launch_work(graph, launches[i], model);
        std::vector<int> preds = launches[i].waits;
        if (const int tail = lane_tail[size_t(launches[i].lane)]; tail >= 0) preds.push_back(tail);
        for (int p : preds) successors[size_t(p)].push_back(int(i));
        unfinished_preds[i] = int(preds.size());
        lane_tail[size_t(launches[i].lane)] = int(i);
    }

    std::vector<double> start_at(n, kNever), remaining(n), ready_after(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
        remaining[i] = work[i].alone_s;
        if (unfinished_preds[i] == 0) start_at[i] = 0;
    }
    std::vector<int> running;
    std::vector<bool> started(n, false);
    double now = 0, end = 0;
    size_t finished = 0;
    while (finished < n) {
        for (size_t i = 0; i < n; ++i)
            if (!started[i] && start_at[i] <= now) started[i] = true, running.push_back(int(i));
        double load = 0;
        for (int r : running) load += work[size_t(r)].demand;
        const double rate = 1.0 / std::max(1.0, load);
        // The next event: a running launch ends or a waiting one may start.
        double next = kNever;
        for (int r : running) next = std::min(next, now + remaining[size_t(r)] / rate);
        for (size_t i = 0; i < n; ++i)
            if (!started[i]) next = std::min(next, start_at[i]);
        if (next == kNever) throw Error("timeline simulation: the program cannot progress (a bug)");
        const double dt = next - now;
        now = next;
        std::vector<int> still;
        for (int r : running) {
            remaining[size_t(r)] -= dt * rate;
            if (remaining[size_t(r)] > 1e-15) {
                still.push_back(r);
                continue;
            }
            ++finished;
            end = std::max(end, now);
            for (int s : successors[size_t(r)]) {
                ready_after[size_t(s)] = std::max(ready_after[size_t(s)], now);
                if (--unfinished_preds[size_t(s)] == 0)
                    start_at[size_t(s)] = ready_after[size_t(s)] +
                                          double(launches[size_t(s)].waits.size()) *
                                              model.device().stream_sync_s;
            }
        }
        running = std::move(still);
    }
    return end * 1e3;
}

ScheduleMeasurement SimulatedScheduleEvaluator::measure(const Schedule& schedule) {
    ScheduleMeasurement m;
    m.simulated = true;
    try {
        m.latency_ms = simulate_program_ms(graph_, StreamProgram(graph_, schedule), model_);
    } catch (const Error& e) {
        m.ok = false;
        m.error = e.what();
    }
    return m;
}

}  // namespace iostune
