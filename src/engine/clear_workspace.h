// Zeroes the bytes of a workspace a kernel is about to be given.
//
// Why: on the H100 a schedule whose workspace slots were written by one library's kernel and
// then handed to another's computed wrong results now and then (docs/memory.md, "A race in the
// workspaces"): four models in one graph, GoogLeNet's 1x1 convolutions as cuBLASLt products
// below the heuristic's first and ResNet-50's convolutions through cuDNN's graph engines, 1 in
// 3 perturbed replays. With every slot zeroed before its launch, none in 30; with every launch
// given a slot of its own (seeded, and left as its kernel left it), 2 in 29. Some kernels read
// their workspace as zeroed counters, so a workspace is always handed over zeroed.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdlib>
#include <string>

#include "src/engine/cuda_check.h"

namespace iostune {

// `kind` names the caller ("gemm", "graph", "legacy") for IOSTUNE_CLEAR_WORKSPACE_ONLY, a
// debugging aid that clears only that kind's workspaces (to tell which kernels need it).
inline void clear_workspace(void* workspace, size_t bytes, cudaStream_t stream, const char* kind,
                            const std::string& context) {
    static const char* only = std::getenv("IOSTUNE_CLEAR_WORKSPACE_ONLY");
    if (workspace == nullptr || bytes == 0 || (only != nullptr && std::string(only) != kind))
        return;
    IOSTUNE_CUDA_CHECK(cudaMemsetAsync(workspace, 0, bytes, stream),
                       context + " (clearing its workspace)");
}

}  // namespace iostune
