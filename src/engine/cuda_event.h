// An owned CUDA event. Fork/join events are created without timing (cheaper to record);
// timing events are used by measure_graph.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "src/engine/cuda_check.h"

namespace iostune {

class CudaEvent {
public:
    enum class Timing { Disabled, Enabled };

    explicit CudaEvent(Timing timing = Timing::Disabled) {
        const unsigned flags = timing == Timing::Enabled ? cudaEventDefault : cudaEventDisableTiming;
        IOSTUNE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags), "creating a CUDA event");
    }
    ~CudaEvent() {
        if (event_ != nullptr) cudaEventDestroy(event_);
    }
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;
    CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
    CudaEvent& operator=(CudaEvent&& other) noexcept {
        std::swap(event_, other.event_);
        return *this;
    }

    cudaEvent_t get() const { return event_; }
    void record(cudaStream_t stream) const {
        IOSTUNE_CUDA_CHECK(cudaEventRecord(event_, stream), "recording a CUDA event");
    }
    // Makes `stream` wait for the work recorded before this event.
    void wait_on(cudaStream_t stream) const {
        IOSTUNE_CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0), "making a stream wait on an event");
    }
    void synchronize() const {
        IOSTUNE_CUDA_CHECK(cudaEventSynchronize(event_), "waiting for a CUDA event");
    }
    // Milliseconds between `start` and this event (both must have timing enabled and completed).
    float elapsed_ms_since(const CudaEvent& start) const {
        float ms = 0.0f;
        IOSTUNE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_),
                           "reading the time between two CUDA events");
        return ms;
    }

private:
    cudaEvent_t event_ = nullptr;
};

}  // namespace iostune
