// Spatial resizing (nearest and bilinear) and the transposed convolution: the upsampling
// operators of U-Nets and FPNs.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "src/reference/kernels.h"

namespace iostune::reference_detail {

namespace {

// Bilinear source coordinate of output index `dst` along an axis, torch's rules.
double bilinear_source(int dst, int in, int out, bool align_corners) {
    if (align_corners) return out > 1 ? double(dst) * (in - 1) / (out - 1) : 0.0;
    return std::max(0.0, (dst + 0.5) * double(in) / double(out) - 0.5);
}

struct Taps {
    int lo = 0, hi = 0;
    float frac = 0.0f;  // weight of `hi`
};

std::vector<Taps> bilinear_taps(int in, int out, bool align_corners) {
    std::vector<Taps> taps(static_cast<size_t>(out));
    for (int d = 0; d < out; ++d) {
        const double src = bilinear_source(d, in, out, align_corners);
        const int lo = std::min(int(src), in - 1);
        taps[size_t(d)] = {lo, std::min(lo + 1, in - 1), float(src - lo)};
    }
    return taps;
}

}  // namespace

void resize(const HostTensor& in, const ResizeAttrs& a, HostTensor& out) {
    const Shape& s = in.shape;
    if (a.mode == ResizeMode::Nearest) {
        for (int n = 0; n < s.n; ++n)
            for (int c = 0; c < s.c; ++c)
                for (int h = 0; h < a.out_h; ++h) {
                    const int sh = std::min(int(int64_t(h) * s.h / a.out_h), s.h - 1);
                    for (int w = 0; w < a.out_w; ++w) {
                        const int sw = std::min(int(int64_t(w) * s.w / a.out_w), s.w - 1);
                        out.at(n, c, h, w) = in.at(n, c, sh, sw);
                    }
                }
        return;
    }
    const auto rows = bilinear_taps(s.h, a.out_h, a.align_corners);
    const auto cols = bilinear_taps(s.w, a.out_w, a.align_corners);
    for (int n = 0; n < s.n; ++n)
        for (int c = 0; c < s.c; ++c)
            for (int h = 0; h < a.out_h; ++h) {
                const Taps& r = rows[size_t(h)];
                for (int w = 0; w < a.out_w; ++w) {
                    const Taps& q = cols[size_t(w)];
                    const float top = (1.0f - q.frac) * in.at(n, c, r.lo, q.lo) +
                                      q.frac * in.at(n, c, r.lo, q.hi);
                    const float bottom = (1.0f - q.frac) * in.at(n, c, r.hi, q.lo) +
                                         q.frac * in.at(n, c, r.hi, q.hi);
                    out.at(n, c, h, w) = (1.0f - r.frac) * top + r.frac * bottom;
                }
            }
}

void conv_transpose2d(const HostTensor& in, const float* weight, const float* bias,
                      const ConvTransposeAttrs& a, HostTensor& out) {
    const Shape& s = in.shape;
    const Shape& o = out.shape;
    const int in_per_group = s.c / a.groups;
    const int out_per_group = a.out_channels / a.groups;
    // Each input pixel scatters into the outputs its kernel covers; accumulated in double.
    std::vector<double> acc(size_t(o.h) * size_t(o.w));
    for (int n = 0; n < s.n; ++n)
        for (int g = 0; g < a.groups; ++g)
            for (int oc = 0; oc < out_per_group; ++oc) {
                const int channel = g * out_per_group + oc;
                std::fill(acc.begin(), acc.end(), bias ? double(bias[channel]) : 0.0);
                for (int icl = 0; icl < in_per_group; ++icl) {
                    const int ic = g * in_per_group + icl;
                    const float* w = weight + (size_t(ic) * size_t(out_per_group) + size_t(oc)) *
                                                  size_t(a.kernel_h) * size_t(a.kernel_w);
                    for (int ih = 0; ih < s.h; ++ih)
                        for (int ki = 0; ki < a.kernel_h; ++ki) {
                            const int oh = ih * a.stride_h - a.pad_h + ki * a.dilation_h;
                            if (oh < 0 || oh >= o.h) continue;
                            for (int iw = 0; iw < s.w; ++iw) {
                                const double x = in.at(n, ic, ih, iw);
                                for (int kj = 0; kj < a.kernel_w; ++kj) {
                                    const int ow = iw * a.stride_w - a.pad_w + kj * a.dilation_w;
                                    if (ow < 0 || ow >= o.w) continue;
                                    acc[size_t(oh) * size_t(o.w) + size_t(ow)] +=
                                        x * w[size_t(ki) * size_t(a.kernel_w) + size_t(kj)];
                                }
                            }
                        }
                }
                float* dst = &out.at(n, channel, 0, 0);
                for (size_t i = 0; i < acc.size(); ++i) dst[i] = float(acc[i]);
            }
}

}  // namespace iostune::reference_detail
