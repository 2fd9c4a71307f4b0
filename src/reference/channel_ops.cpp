// The operators of deployed CNNs that work pixel by pixel or channel by channel: activations,
// PReLU, broadcasting binary arithmetic, per-channel affine maps, channel shuffle and slice, the
// layer norm over channels and split attention's softmax across branches.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "src/reference/kernels.h"

namespace iostune::reference_detail {

namespace {

float clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

float activate(ActivationFunction f, float alpha, float beta, float x) {
    switch (f) {
        case ActivationFunction::Clip: return x < alpha ? alpha : (x > beta ? beta : x);
        case ActivationFunction::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
        case ActivationFunction::Silu: return x / (1.0f + std::exp(-x));
        case ActivationFunction::HardSigmoid: return clamp01(alpha * x + beta);
        case ActivationFunction::HardSwish: return x * clamp01(x / 6.0f + 0.5f);
        case ActivationFunction::LeakyRelu: return x >= 0.0f ? x : alpha * x;
        case ActivationFunction::Gelu:
            return float(0.5 * double(x) * (1.0 + std::erf(double(x) * M_SQRT1_2)));
        case ActivationFunction::Tanh: return std::tanh(x);
    }
    return x;
}

float combine(BinaryOp op, float a, float b) {
    switch (op) {
        case BinaryOp::Add: return a + b;
        case BinaryOp::Sub: return a - b;
        case BinaryOp::Mul: return a * b;
        case BinaryOp::Div: return a / b;
    }
    return a;
}

}  // namespace

void activation(const HostTensor& in, const ActivationAttrs& a, HostTensor& out) {
    for (size_t i = 0; i < in.data.size(); ++i)
        out.data[i] = activate(a.function, a.alpha, a.beta, in.data[i]);
}

void prelu(const HostTensor& in, const float* slope, HostTensor& out) {
    const size_t pixels = size_t(in.shape.h) * size_t(in.shape.w);
    for (int n = 0; n < in.shape.n; ++n)
        for (int c = 0; c < in.shape.c; ++c) {
            const size_t base = (size_t(n) * size_t(in.shape.c) + size_t(c)) * pixels;
            for (size_t p = 0; p < pixels; ++p) {
                const float x = in.data[base + p];
                out.data[base + p] = x >= 0.0f ? x : slope[c] * x;
            }
        }
}

void radix_softmax(const HostTensor& in, const RadixSoftmaxAttrs& a, HostTensor& out) {
    const Shape& s = in.shape;
    const int r = s.c / (a.radix * a.cardinality);
    const size_t pixels = size_t(s.h) * size_t(s.w);
    std::vector<double> e(size_t(a.radix));
    for (int n = 0; n < s.n; ++n)
        for (int g = 0; g < a.cardinality; ++g)
            for (int j = 0; j < r; ++j)
                for (size_t p = 0; p < pixels; ++p) {
                    // The branches of (g, j) at this pixel: input channel (g * radix + k) * r + j.
                    const auto source = [&](int k) {
                        const size_t c = size_t(g * a.radix + k) * size_t(r) + size_t(j);
                        return in.data[(size_t(n) * size_t(s.c) + c) * pixels + p];
                    };
                    double top = source(0), sum = 0.0;
                    for (int k = 1; k < a.radix; ++k) top = std::max(top, double(source(k)));
                    for (int k = 0; k < a.radix; ++k)
                        sum += e[size_t(k)] = std::exp(source(k) - top);
                    for (int k = 0; k < a.radix; ++k) {
                        const size_t c = size_t(k * a.cardinality + g) * size_t(r) + size_t(j);
                        out.data[(size_t(n) * size_t(s.c) + c) * pixels + p] =
                            float(e[size_t(k)] / sum);
                    }
                }
}

void binary(const HostTensor& a, const HostTensor& b, BinaryOp op, HostTensor& out) {
    const Shape& s = out.shape;
    // An axis of size 1 is read at index 0 for every output index along it.
    auto index = [](const Shape& t, int n, int c, int h, int w) {
        return ((size_t(n) * size_t(t.c) + size_t(t.c == 1 ? 0 : c)) * size_t(t.h) +
                size_t(t.h == 1 ? 0 : h)) * size_t(t.w) + size_t(t.w == 1 ? 0 : w);
    };
    for (int n = 0; n < s.n; ++n)
        for (int c = 0; c < s.c; ++c)
            for (int h = 0; h < s.h; ++h)
                for (int w = 0; w < s.w; ++w)
                    out.at(n, c, h, w) = combine(op, a.data[index(a.shape, n, c, h, w)],
                                                 b.data[index(b.shape, n, c, h, w)]);
}

void channel_affine(const HostTensor& in, const float* scale, const float* shift,
                    HostTensor& out) {
    const size_t pixels = size_t(in.shape.h) * size_t(in.shape.w);
    for (int n = 0; n < in.shape.n; ++n)
        for (int c = 0; c < in.shape.c; ++c) {
            const size_t base = (size_t(n) * size_t(in.shape.c) + size_t(c)) * pixels;
            for (size_t p = 0; p < pixels; ++p)
                out.data[base + p] = scale[c] * in.data[base + p] + shift[c];
        }
}

void channel_shuffle(const HostTensor& in, int groups, HostTensor& out) {
    const int per_group = in.shape.c / groups;
    const size_t plane = size_t(in.shape.h) * size_t(in.shape.w);
    for (int n = 0; n < in.shape.n; ++n)
        for (int g = 0; g < groups; ++g)
            for (int k = 0; k < per_group; ++k) {
                const float* src =
                    in.data.data() + (size_t(n) * size_t(in.shape.c) + size_t(g * per_group + k)) * plane;
                std::copy(src, src + plane, &out.at(n, k * groups + g, 0, 0));
            }
}

void channel_slice(const HostTensor& in, int begin, HostTensor& out) {
    const size_t count = size_t(out.shape.c) * size_t(in.shape.h) * size_t(in.shape.w);
    for (int n = 0; n < in.shape.n; ++n) {
        const size_t plane = size_t(in.shape.h) * size_t(in.shape.w);
        const float* src = in.data.data() + (size_t(n) * size_t(in.shape.c) + size_t(begin)) * plane;
        std::copy(src, src + count, out.data.data() + size_t(n) * count);
    }
}

void channel_norm(const HostTensor& in, float eps, const float* gamma, const float* beta,
                  HostTensor& out) {
    const Shape& s = in.shape;
    const size_t pixels = size_t(s.h) * size_t(s.w);
    for (int n = 0; n < s.n; ++n) {
        const float* x = in.data.data() + size_t(n) * size_t(s.c) * pixels;
        float* y = out.data.data() + size_t(n) * size_t(s.c) * pixels;
        for (size_t p = 0; p < pixels; ++p) {
            double sum = 0.0;
            for (int c = 0; c < s.c; ++c) sum += x[size_t(c) * pixels + p];
            const double mean = sum / s.c;
            double squares = 0.0;
            for (int c = 0; c < s.c; ++c) {
                const double d = x[size_t(c) * pixels + p] - mean;
                squares += d * d;
            }
            const double inv_std = 1.0 / std::sqrt(squares / s.c + double(eps));
            for (int c = 0; c < s.c; ++c) {
                const size_t i = size_t(c) * pixels + p;
                y[i] = float((x[i] - mean) * inv_std * gamma[c] + beta[c]);
            }
        }
    }
}

}  // namespace iostune::reference_detail
