#include "tests/gpu/pdl_kernels.h"

#include <stdexcept>
#include <string>

namespace iostune::test {
namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

__global__ void early_trigger_then_write(int* flag, uint64_t nanoseconds) {
    asm volatile("griddepcontrol.launch_dependents;");
    uint64_t start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
    *flag = 1;
}

__global__ void programmatic_noop() {}

__global__ void copy_flag(const int* from, int* to) { *to = *from; }

}  // namespace

void launch_early_trigger_then_write(int* flag, uint64_t nanoseconds, cudaStream_t stream) {
    early_trigger_then_write<<<1, 1, 0, stream>>>(flag, nanoseconds);
    check(cudaGetLastError(), "launching early_trigger_then_write");
}

void launch_programmatic_noop(cudaStream_t stream) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(1);
    config.blockDim = dim3(1);
    config.stream = stream;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    check(cudaLaunchKernelEx(&config, programmatic_noop), "launching programmatic_noop");
}

void launch_copy_flag(const int* from, int* to, cudaStream_t stream) {
    copy_flag<<<1, 1, 0, stream>>>(from, to);
    check(cudaGetLastError(), "launching copy_flag");
}

}  // namespace iostune::test
