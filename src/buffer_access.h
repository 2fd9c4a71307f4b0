// What each launch of a stream program reads and writes under a memory plan: the one account of
// accesses that both the planner's liveness (which buffers may share bytes) and the concurrency
// audit (which concurrent launches touch the same bytes) rely on, so they cannot disagree.
//
// An op's launch reads its inputs' places and writes its output's place and its scratch; a
// Concat also writes its whole output (the inputs it copies); a ChannelSlice launches nothing
// (its consumers read its input's buffer). A merge launch writes its stacked buffer (when the
// plan holds the stage; otherwise the engine gives it a buffer of its own, outside both regions)
// and the homes of its ops that do not live in their slice (the copies out), and its ops' own
// scratch (kept for their convolutions run alone), and reads its input. Conservative by design:
// an extra access only lengthens a lifetime.
#pragma once

#include <vector>

#include "src/graph.h"
#include "src/memory_planner.h"
#include "src/stream_program.h"

namespace iostune {

struct BufferAccess {
    int buffer = -1;
    int first_channel = 0;  // channels [first_channel, first_channel + channels) of the buffer
    int channels = 0;
    bool write = false;
};

// One list per launch of `program`, in launch order.
std::vector<std::vector<BufferAccess>> launch_accesses(const Graph& graph, const MemoryPlan& plan,
                                                       const StreamProgram& program);

// Whether the launch runs a convolution (cuDNN, cuBLASLt or the engine's transposed
// convolution), which takes a workspace.
bool uses_workspace(const Graph& graph, const Launch& launch);

}  // namespace iostune
