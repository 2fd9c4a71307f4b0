// Device memory for the shared region of memory plans (src/memory_planner.h): where activations
// and scratch that the schedule lets share bytes live.
//
// Every engine has one. Engines that never run at the same time (one model's graphs for several
// batch sizes, the models of a service that run one after another) can share one, sized for the
// largest of them, instead of holding one each: create it with that size (the CPU planner gives
// each schedule's MemoryPlan::shared_bytes: Engine::plan_memory_for) and hand it to each engine
// through EngineOptions::arena. Between launches nothing in the region is kept (inputs and
// outputs live in each engine's own I/O region), so the engines' plans may overlap freely; what
// the caller must ensure is that their launches (and their construction and prepare(), which
// time kernels there) are ordered: one stream, or events between them.
#pragma once

#include <cstddef>

#include "src/engine/device_buffer.h"

namespace iostune {

class DeviceArena {
public:
    // `offset`: bytes left unused before the region (a multiple of 256, checked by
    // EngineOptions' users), so that every buffer of a plan lands that much further on: a
    // diagnostic of how much a schedule's latency depends on where its buffers lie
    // (EngineOptions::arena_offset).
    explicit DeviceArena(size_t bytes, size_t offset = 0)
        : buffer_(bytes + offset), offset_(offset), bytes_(bytes) {}

    void* data() const { return static_cast<char*>(buffer_.get()) + offset_; }
    size_t bytes() const { return bytes_; }  // the region's, without the offset
    size_t offset() const { return offset_; }

private:
    DeviceBuffer buffer_;
    size_t offset_;
    size_t bytes_;
};

}  // namespace iostune
