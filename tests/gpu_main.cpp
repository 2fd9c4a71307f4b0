// Entry point of the [gpu] suite: on a machine without a usable CUDA device it says why and
// exits 77, which CTest reports as "skipped" instead of silently passing.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <cstdio>

int main(int argc, char* argv[]) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        std::printf("SKIPPED: [gpu] tests need a CUDA device; cudaGetDeviceCount says: %s\n",
                    status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
        return 77;
    }
    return Catch::Session().run(argc, argv);
}
