#include "src/engine/kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>

#include "src/engine/cuda_check.h"

namespace iostune {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxAddInputs = 8;  // inputs per add kernel; more are summed in further passes

// Address of flat element `i` (in packed NCHW order) of a possibly channel-sliced view.
__device__ __forceinline__ int64_t view_offset(int64_t i, int64_t item, int64_t batch_stride) {
    return (i / item) * batch_stride + i % item;
}

unsigned blocks_for(int64_t count) {
    return unsigned(std::min<int64_t>((count + kThreads - 1) / kThreads, 65535LL * 16));
}

void check_launch(const char* kernel) {
    IOSTUNE_CUDA_CHECK(cudaGetLastError(), fmt::format("launching the {} kernel", kernel));
}

__global__ void pool2d_kernel(const float* in, int64_t in_stride, float* out, int64_t out_stride,
                              int n, int c, int in_h, int in_w, int out_h, int out_w,
                              PoolWindow win) {
    const int64_t total = int64_t(n) * c * out_h * out_w;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
         i += int64_t(gridDim.x) * blockDim.x) {
        const int ow = int(i % out_w);
        const int oh = int((i / out_w) % out_h);
        const int ch = int((i / (int64_t(out_w) * out_h)) % c);
        const int64_t b = i / (int64_t(out_w) * out_h * c);
        const float* src = in + b * in_stride + int64_t(ch) * in_h * in_w;
        int h0 = oh * win.stride_h - win.pad_h;
        int w0 = ow * win.stride_w - win.pad_w;
        int h1 = min(h0 + win.kernel_h, in_h + win.pad_h);
        int w1 = min(w0 + win.kernel_w, in_w + win.pad_w);
        const int padded_size = (h1 - h0) * (w1 - w0);
        h0 = max(h0, 0);
        w0 = max(w0, 0);
        h1 = min(h1, in_h);
        w1 = min(w1, in_w);
        float acc = win.max ? -FLT_MAX : 0.0f;
        for (int y = h0; y < h1; ++y) {
            for (int x = w0; x < w1; ++x) {
                const float v = src[y * in_w + x];
                acc = win.max ? fmaxf(acc, v) : acc + v;
            }
        }
        if (!win.max) {
            const int divisor = win.count_include_pad ? padded_size : (h1 - h0) * (w1 - w0);
            acc = divisor > 0 ? acc / float(divisor) : 0.0f;
        }
        out[b * out_stride + (int64_t(ch) * out_h + oh) * out_w + ow] = acc;
    }
}

struct AddInputs {
    const float* data[kMaxAddInputs];
    int64_t batch_stride[kMaxAddInputs];
    int count;
};

__global__ void add_kernel(AddInputs inputs, float* out, int64_t out_stride, int64_t total,
                           int64_t item, bool accumulate, bool relu) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
         i += int64_t(gridDim.x) * blockDim.x) {
        float* dst = out + view_offset(i, item, out_stride);
        float acc = accumulate ? *dst : 0.0f;
        for (int k = 0; k < inputs.count; ++k) {
            acc += inputs.data[k][view_offset(i, item, inputs.batch_stride[k])];
        }
        *dst = relu ? fmaxf(acc, 0.0f) : acc;
    }
}

__global__ void copy_kernel(const float* in, int64_t in_stride, float* out, int64_t out_stride,
                            int64_t total, int64_t item, bool relu) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
         i += int64_t(gridDim.x) * blockDim.x) {
        const float v = in[view_offset(i, item, in_stride)];
        out[view_offset(i, item, out_stride)] = relu ? fmaxf(v, 0.0f) : v;
    }
}

__global__ void bias_activation_kernel(float* x, int64_t stride, int64_t total, int64_t item,
                                       int64_t plane, const float* bias, bool relu) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
         i += int64_t(gridDim.x) * blockDim.x) {
        float* p = x + view_offset(i, item, stride);
        float v = *p;
        if (bias != nullptr) v += bias[(i % item) / plane];
        *p = relu ? fmaxf(v, 0.0f) : v;
    }
}

void require_same_shape(const TensorView& a, const TensorView& b, const char* what) {
    if (!a.same_shape(b)) {
        throw Error(fmt::format("{}: input {}x{}x{}x{} and output {}x{}x{}x{} differ", what, a.n,
                                a.c, a.h, a.w, b.n, b.c, b.h, b.w));
    }
}

}  // namespace

void launch_pool2d(const TensorView& in, const TensorView& out, const PoolWindow& window,
                   cudaStream_t stream) {
    const int64_t total = out.elements();
    if (total == 0) return;
    pool2d_kernel<<<blocks_for(total), kThreads, 0, stream>>>(in.data, in.batch_stride, out.data,
                                                              out.batch_stride, out.n, out.c, in.h,
                                                              in.w, out.h, out.w, window);
    check_launch("pool2d");
}

void launch_add(const std::vector<TensorView>& inputs, const TensorView& out, bool relu,
                cudaStream_t stream) {
    if (inputs.empty()) throw Error("add: no inputs");
    const int64_t total = out.elements();
    const int64_t item = int64_t(out.c) * out.h * out.w;
    for (size_t first = 0; first < inputs.size(); first += kMaxAddInputs) {
        AddInputs batch{};
        batch.count = int(std::min<size_t>(kMaxAddInputs, inputs.size() - first));
        for (int k = 0; k < batch.count; ++k) {
            const TensorView& v = inputs[first + size_t(k)];
            require_same_shape(v, out, "add");
            batch.data[k] = v.data;
            batch.batch_stride[k] = v.batch_stride;
        }
        const bool last = first + kMaxAddInputs >= inputs.size();
        add_kernel<<<blocks_for(total), kThreads, 0, stream>>>(batch, out.data, out.batch_stride,
                                                               total, item, first > 0, relu && last);
        check_launch("add");
    }
}

void launch_copy(const TensorView& in, const TensorView& out, bool relu, cudaStream_t stream) {
    require_same_shape(in, out, relu ? "relu" : "copy");
    const int64_t total = out.elements();
    if (total == 0) return;
    copy_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        in.data, in.batch_stride, out.data, out.batch_stride, total,
        int64_t(out.c) * out.h * out.w, relu);
    check_launch(relu ? "relu" : "copy");
}

void launch_bias_activation(const TensorView& x, const float* bias, bool relu, cudaStream_t stream) {
    const int64_t total = x.elements();
    if (total == 0 || (bias == nullptr && !relu)) return;
    bias_activation_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        x.data, x.batch_stride, total, int64_t(x.c) * x.h * x.w, int64_t(x.h) * x.w, bias, relu);
    check_launch("bias_activation");
}

}  // namespace iostune
