#include "tests/gpu/pdl_kernels.h"

#include <stdexcept>
#include <string>

namespace iostune::test {
namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// griddepcontrol is sm_90's (PDL needs Hopper); built for an older GPU the kernels keep their
// order and the test says why it skips the race.
__global__ void early_trigger_then_copy(const int* from, int* to, uint64_t nanoseconds) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    uint64_t start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
    *to = *reinterpret_cast<const volatile int*>(from);
}

__global__ void programmatic_write(int* target, int value) {
    *reinterpret_cast<volatile int*>(target) = value;
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace

void launch_early_trigger_then_copy(const int* from, int* to, uint64_t nanoseconds,
                                    cudaStream_t stream) {
    early_trigger_then_copy<<<1, 1, 0, stream>>>(from, to, nanoseconds);
    check(cudaGetLastError(), "launching early_trigger_then_copy");
}

void launch_programmatic_write(int* target, int value, cudaStream_t stream) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(1);
    config.blockDim = dim3(1);
    config.stream = stream;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    check(cudaLaunchKernelEx(&config, programmatic_write, target, value),
          "launching programmatic_write");
}

}  // namespace iostune::test
