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

#include <algorithm>
#include <cstddef>

#include "src/engine/device_buffer.h"

namespace iostune {

class DeviceArena {
public:
    // `offset`: bytes left unused before the region; `room`: how far (at least `offset`) the
    // region may be moved later (move_to), allocated past it. Both multiples of 256, checked by
    // the engine. A diagnostic and a search's means of timing a schedule at other placements
    // (EngineOptions::arena_offset, Engine::place_arena): nothing else moves.
    explicit DeviceArena(size_t bytes, size_t offset = 0, size_t room = 0)
        : buffer_(bytes + std::max(room, offset)),
          offset_(offset),
          room_(std::max(room, offset)),
          bytes_(bytes) {}

    void* data() const { return static_cast<char*>(buffer_.get()) + offset_; }
    size_t bytes() const { return bytes_; }  // the region's, without the room around it
    size_t offset() const { return offset_; }
    size_t room() const { return room_; }  // allocated, never used: offset + what is after
    // The region starts `offset` bytes in from now on (at most room()); what was written in it
    // is not moved (nothing in it is kept between launches).
    void move_to(size_t offset) { offset_ = offset; }

private:
    DeviceBuffer buffer_;
    size_t offset_;
    size_t room_;
    size_t bytes_;
};

}  // namespace iostune
