#include "profiler/device_ceilings.h"

#include <algorithm>
#include <vector>

#include "src/engine/cublas_handle.h"
#include "src/engine/cuda_event.h"
#include "src/engine/cuda_stream.h"
#include "src/engine/device_buffer.h"
#include "src/engine/kernels.h"
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

DeviceCeilings measure_device_ceilings(Precision precision) {
    DeviceCeilings ceilings;
    ceilings.precision = precision;
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

    // The arithmetic ceiling of the precision: SGEMM (strict or TF32 tensor cores), or a
    // 16-bit GEMM on tensor cores with fp32 accumulation, as the engine's convolutions run.
    constexpr int kDim = 8192;
    const DType type = storage_type(precision);
    const size_t float_bytes = size_t(kDim) * kDim * sizeof(float);
    const size_t matrix_bytes = size_t(kDim) * kDim * size_t(dtype_bytes(type));
    DeviceBuffer a(matrix_bytes), b(matrix_bytes), c(matrix_bytes), staging(float_bytes);
    // Random operands: zeros can run faster than real data.
    const HostTensor operand = random_input({1, 1, kDim, kDim}, 1);
    // On the stream that converts it (a synchronous copy from pageable memory is not ordered
    // with it).
    IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(staging.get(), operand.data.data(), float_bytes,
                                       cudaMemcpyHostToDevice, stream.get()),
                       "uploading the GEMM probe");
    const TensorView from = packed_view(staging.get(), DType::F32, TensorLayout::Nchw, 1, 1, kDim, kDim);
    launch_convert(from, packed_view(a.get(), type, TensorLayout::Nchw, 1, 1, kDim, kDim), stream.get());
    launch_convert(from, packed_view(b.get(), type, TensorLayout::Nchw, 1, 1, kDim, kDim), stream.get());
    CublasHandle cublas;
    cublas.set_stream(stream.get());
    IOSTUNE_CUBLAS_CHECK(cublasSetMathMode(cublas.get(),
                                           precision == Precision::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                           : precision == Precision::Fp32 ? CUBLAS_PEDANTIC_MATH
                                                                          : CUBLAS_DEFAULT_MATH),
                         "setting the probe's math mode");
    const cudaDataType_t data_type =
        type == DType::F16 ? CUDA_R_16F : (type == DType::BF16 ? CUDA_R_16BF : CUDA_R_32F);
    const float one = 1.0f, zero = 0.0f;
    const double gemm_ms = median_ms(stream, [&] {
        IOSTUNE_CUBLAS_CHECK(cublasGemmEx(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, kDim, kDim, kDim,
                                          &one, a.get(), data_type, kDim, b.get(), data_type, kDim,
                                          &zero, c.get(), data_type, kDim, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT),
                             "timing the GEMM probe");
    });
    ceilings.flops_per_s = 2.0 * double(kDim) * kDim * kDim / (gemm_ms * 1e-3);
    return ceilings;
}

}  // namespace iostune
