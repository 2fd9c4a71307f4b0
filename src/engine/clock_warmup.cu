#include "src/engine/clock_warmup.h"

#include <algorithm>
#include <chrono>

#include "src/engine/cuda_check.h"
#include "src/engine/cuda_event.h"

namespace iostune {

namespace {

// A chain of dependent multiply-adds: its time follows the SM clock, not memory.
__global__ void clock_probe_kernel(float* sink, int iterations) {
    float a = float(threadIdx.x);
    for (int i = 0; i < iterations; ++i) a = a * 0.999999f + 0.5f;
    if (a == -1.0f) *sink = a;  // never true; keeps the loop from being optimised away
}

}  // namespace

int warm_up_clock(cudaStream_t stream, double max_ms) {
    constexpr int kIterations = 50000;  // about 0.1 ms at the H100's full clock
    constexpr float kSteadyMs = 10.0f;
    int device = 0, sms = 1;
    IOSTUNE_CUDA_CHECK(cudaGetDevice(&device), "querying the current device");
    IOSTUNE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                       "querying the multiprocessor count");
    const CudaEvent start(CudaEvent::Timing::Enabled), stop(CudaEvent::Timing::Enabled);
    const auto begin = std::chrono::steady_clock::now();
    float fastest = 1e30f, steady_ms = 0.0f;
    int runs = 0;
    // Steady for a while, not for a run or two: the clock climbs in steps, and a step can last
    // longer than one probe.
    while (steady_ms < kSteadyMs) {
        start.record(stream);
        clock_probe_kernel<<<4 * sms, 256, 0, stream>>>(nullptr, kIterations);
        IOSTUNE_CUDA_CHECK(cudaGetLastError(), "launching the clock probe kernel");
        stop.record(stream);
        stop.synchronize();
        const float ms = stop.elapsed_ms_since(start);
        ++runs;
        const bool near = ms >= 0.98f * fastest && ms <= 1.02f * fastest;
        steady_ms = near ? steady_ms + ms : 0.0f;
        fastest = std::min(fastest, ms);
        const std::chrono::duration<double, std::milli> spent =
            std::chrono::steady_clock::now() - begin;
        if (spent.count() > max_ms) break;
    }
    return runs;
}

}  // namespace iostune
