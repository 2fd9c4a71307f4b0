#include "src/engine/device_memory.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "src/engine/cuda_check.h"
#include "src/error.h"
#include "src/host_memory.h"
#include "src/memory_needs.h"
#include "src/quoted.h"

namespace iostune {

void require_engine_memory(const Graph& graph, Precision precision, int element_bytes) {
    const std::string model =
        fmt::format("model {} at batch {} ({})", quoted_name(graph.name()), graph.batch(),
                    to_string(precision));
    require_host_memory(reference_memory_needs(graph).weights,
                        fmt::format("the seeded weights of {}", model));
    const MemoryNeeds needs = engine_memory_needs(graph, element_bytes);
    size_t free_bytes = 0, total_bytes = 0;
    IOSTUNE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes),
                       "reading the GPU's free memory before planning the engine");
    if (needs.total() <= int64_t(free_bytes)) return;
    throw Error(fmt::format("needs {} of device memory for the weights and activations of {}; "
                            "this GPU has {} free of {}",
                            byte_text(needs.total()), model, byte_text(int64_t(free_bytes)),
                            byte_text(int64_t(total_bytes))));
}

}  // namespace iostune
