#include "profiler/device_ceilings.h"

#include <algorithm>
#include <vector>

#include "src/engine/cublas_handle.h"
#include "src/engine/cuda_event.h"
#include "src/engine/cuda_stream.h"
#include "src/engine/device_buffer.h"
#include "src/weights.h"

namespace iostune {

namespace {

constexpr int kRepeats = 5;

// Median time of `run` over a few event-timed repeats, after one warm-up run.
template <class Run>
double median_ms(const CudaStream& stream, Run run) {
    CudaEvent start(CudaEvent::Timing::Enabled), stop(CudaEvent::Timing::Enabled);
    run();
    std::vector<double> times;
    for (int i = 0; i < kRepeats; ++i) {
        start.record(stream.get());
        run();
        stop.record(stream.get());
        stop.synchronize();
        times.push_back(stop.elapsed_ms_since(start));
    }
    std::nth_element(times.begin(), times.begin() + kRepeats / 2, times.end());
    return times[kRepeats / 2];
}

}  // namespace

DeviceCeilings measure_device_ceilings(MathMode math) {
    DeviceCeilings ceilings;
    ceilings.math = math;
    CudaStream stream;

    constexpr size_t kCopyBytes = size_t(1) << 30;
    DeviceBuffer src(kCopyBytes), dst(kCopyBytes);
    IOSTUNE_CUDA_CHECK(cudaMemsetAsync(src.get(), 1, kCopyBytes, stream.get()),
                       "filling the bandwidth probe");
    const double copy_ms = median_ms(stream, [&] {
        IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kCopyBytes,
                                           cudaMemcpyDeviceToDevice, stream.get()),
                           "timing a device-to-device copy");
    });
    ceilings.bytes_per_s = 2.0 * double(kCopyBytes) / (copy_ms * 1e-3);

    constexpr int kDim = 8192;
    const size_t matrix_bytes = size_t(kDim) * kDim * sizeof(float);
    DeviceBuffer a(matrix_bytes), b(matrix_bytes), c(matrix_bytes);
    // Random operands: zeros can run faster than real data.
    const HostTensor operand = random_input({1, 1, kDim, kDim}, 1);
    IOSTUNE_CUDA_CHECK(cudaMemcpy(a.get(), operand.data.data(), matrix_bytes, cudaMemcpyHostToDevice),
                       "uploading the SGEMM probe");
    IOSTUNE_CUDA_CHECK(cudaMemcpy(b.get(), operand.data.data(), matrix_bytes, cudaMemcpyHostToDevice),
                       "uploading the SGEMM probe");
    CublasHandle cublas;
    cublas.set_stream(stream.get());
    IOSTUNE_CUBLAS_CHECK(cublasSetMathMode(cublas.get(), math == MathMode::Tf32
                                                             ? CUBLAS_TF32_TENSOR_OP_MATH
                                                             : CUBLAS_PEDANTIC_MATH),
                         "setting the probe's math mode");
    const float one = 1.0f, zero = 0.0f;
    const double gemm_ms = median_ms(stream, [&] {
        IOSTUNE_CUBLAS_CHECK(cublasSgemm(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, kDim, kDim, kDim,
                                         &one, a.floats(), kDim, b.floats(), kDim, &zero,
                                         c.floats(), kDim),
                             "timing the SGEMM probe");
    });
    ceilings.flops_per_s = 2.0 * double(kDim) * kDim * kDim / (gemm_ms * 1e-3);
    return ceilings;
}

}  // namespace iostune
