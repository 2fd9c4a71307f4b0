// Seeded uniform values in [-1, 1) for device memory nothing has written yet (launch_fill_uniform,
// kernels.h): a stateless hash of (seed, index), so the values do not depend on the launch shape.
#include "src/engine/kernel_support.cuh"
#include "src/engine/kernels.h"

namespace iostune {

using namespace kernel_support;

namespace {

// SplitMix64's finaliser: consecutive indexes give unrelated 64-bit values.
__device__ __forceinline__ uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

template <class T>
__global__ void fill_uniform_kernel(T* data, int64_t total, uint64_t seed) {
    IOSTUNE_GRID_LOOP(i, total) {
        // The top 24 bits as a fraction in [0, 1), exact in float.
        const float unit = float(mix(seed ^ mix(uint64_t(i))) >> 40) * (1.0f / 16777216.0f);
        store(data + i, 2.0f * unit - 1.0f);
    }
}

constexpr int kMaxBiasViews = 16;
struct BiasTable {
    void* out[kMaxBiasViews];
    const void* bias[kMaxBiasViews];
    int64_t row_stride[kMaxBiasViews];
};

// Grid y: the view; x: its rows times channels.
template <class T>
__global__ void fill_bias_rows_kernel(BiasTable table, int64_t rows, int channels) {
    const int v = int(blockIdx.y);
    T* out = static_cast<T*>(table.out[v]);
    const T* bias = static_cast<const T*>(table.bias[v]);
    const int64_t stride = table.row_stride[v];
    IOSTUNE_GRID_LOOP(i, rows * channels) {
        const int64_t row = i / channels;
        const int c = int(i - row * channels);
        out[row * stride + c] = bias[c];
    }
}

}  // namespace

void launch_fill_bias_rows(const std::vector<BiasRows>& views, cudaStream_t stream) {
    if (views.empty()) return;
    const TensorView& first = views.front().out;
    for (const BiasRows& v : views)
        if (!v.out.nhwc() || !v.out.same_shape(first) || v.out.dtype != first.dtype ||
            v.bias == nullptr)
            throw Error(fmt::format("bias rows: needs channels-last views of one shape and type, "
                                    "each with a bias; got {}x{}x{}x{}",
                                    v.out.n, v.out.c, v.out.h, v.out.w));
    const int64_t rows = first.rows();
    if (rows * first.c == 0) return;
    dispatch(first.dtype, [&](auto t) {
        using T = decltype(t);
        for (size_t begin = 0; begin < views.size(); begin += kMaxBiasViews) {
            const size_t count = std::min(views.size() - begin, size_t(kMaxBiasViews));
            BiasTable table{};
            for (size_t k = 0; k < count; ++k) {
                table.out[k] = views[begin + k].out.data;
                table.bias[k] = views[begin + k].bias;
                table.row_stride[k] = views[begin + k].out.row_stride;
            }
            const dim3 grid(unsigned(std::min<int64_t>(blocks_for(rows * first.c), 1024)),
                            unsigned(count));
            fill_bias_rows_kernel<T><<<grid, kThreads, 0, stream>>>(table, rows, first.c);
        }
    });
    check_launch("bias rows");
}

void launch_fill_uniform(void* data, int64_t elements, DType dtype, uint64_t seed,
                         cudaStream_t stream) {
    if (elements <= 0) return;
    dispatch(dtype, [&](auto t) {
        using T = decltype(t);
        fill_uniform_kernel<T><<<blocks_for(elements), kThreads, 0, stream>>>(
            static_cast<T*>(data), elements, seed);
    });
    check_launch("fill");
}

}  // namespace iostune
