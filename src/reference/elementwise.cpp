// The light operators: concat, add, relu, linear, softmax.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "src/reference/kernels.h"

namespace iostune::reference_detail {

namespace {

// ReLU that keeps NaN, as torch.relu does (std::max(0, NaN) would give 0).
inline float relu(float v) { return v < 0.0f ? 0.0f : v; }

}  // namespace

void concat_channels(const std::vector<const HostTensor*>& inputs, HostTensor& out) {
    const size_t pixels = size_t(out.shape.h) * size_t(out.shape.w);
    for (int n = 0; n < out.shape.n; ++n) {
        float* dst = &out.at(n, 0, 0, 0);
        for (const HostTensor* t : inputs) {
            const size_t count = size_t(t->shape.c) * pixels;
            const float* src = t->data.data() + size_t(n) * count;
            dst = std::copy(src, src + count, dst);
        }
    }
}

void add(const std::vector<const HostTensor*>& inputs, bool apply_relu, HostTensor& out) {
    out.data = inputs[0]->data;
    for (size_t i = 1; i < inputs.size(); ++i) {
        const float* src = inputs[i]->data.data();
        for (size_t j = 0; j < out.data.size(); ++j) out.data[j] += src[j];
    }
    if (apply_relu) relu_inplace(out);
}

void relu_inplace(HostTensor& t) {
    for (float& v : t.data) v = relu(v);
}

void linear(const HostTensor& in, const float* weight, const float* bias, HostTensor& out) {
    const size_t features = size_t(in.shape.c) * size_t(in.shape.h) * size_t(in.shape.w);
    const int outputs = out.shape.c;
    for (int n = 0; n < in.shape.n; ++n) {
        const float* x = in.data.data() + size_t(n) * features;
        for (int o = 0; o < outputs; ++o) {
            const float* w = weight + size_t(o) * features;
            // Double accumulation: the dot products run to several thousand terms.
            double sum = bias ? double(bias[o]) : 0.0;
            for (size_t i = 0; i < features; ++i) sum += double(w[i]) * double(x[i]);
            out.at(n, o, 0, 0) = float(sum);
        }
    }
}

void softmax_channels(const HostTensor& in, HostTensor& out) {
    const Shape& s = in.shape;
    const size_t pixels = size_t(s.h) * size_t(s.w);
    std::vector<float> peak(pixels);
    std::vector<double> total(pixels);
    for (int n = 0; n < s.n; ++n) {
        const float* x = in.data.data() + size_t(n) * size_t(s.c) * pixels;
        float* y = out.data.data() + size_t(n) * size_t(s.c) * pixels;
        // Subtracting the per-pixel maximum keeps exp() finite for large logits.
        std::copy(x, x + pixels, peak.begin());
        for (int c = 1; c < s.c; ++c)
            for (size_t p = 0; p < pixels; ++p)
                peak[p] = std::max(peak[p], x[size_t(c) * pixels + p]);
        std::fill(total.begin(), total.end(), 0.0);
        for (int c = 0; c < s.c; ++c) {
            for (size_t p = 0; p < pixels; ++p) {
                const size_t i = size_t(c) * pixels + p;
                y[i] = std::exp(x[i] - peak[p]);
                total[p] += y[i];
            }
        }
        for (int c = 0; c < s.c; ++c)
            for (size_t p = 0; p < pixels; ++p)
                y[size_t(c) * pixels + p] = float(y[size_t(c) * pixels + p] / total[p]);
    }
}

}  // namespace iostune::reference_detail
