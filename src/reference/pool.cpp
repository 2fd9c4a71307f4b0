// Max and average pooling with torch.nn.{Max,Avg}Pool2d semantics (ATen's CPU kernels):
// max pooling pads with -inf and propagates NaN; average pooling with count_include_pad divides
// by the window clipped to the padded input (input + pad on each side), which under ceil_mode
// can be smaller than kernel_h * kernel_w; without it, by the window clipped to the input.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "src/reference/kernels.h"

namespace iostune::reference_detail {

namespace {

// The window of output index o along one axis: [start, end) in input coordinates, and the extent
// counted by count_include_pad.
struct Window {
    int start = 0, end = 0;
    int padded_extent = 0;
};

Window window_along(int o, int kernel, int stride, int pad, int in) {
    const int start = o * stride - pad;
    const int padded_end = std::min(start + kernel, in + pad);
    return {std::max(start, 0), std::min(padded_end, in), padded_end - start};
}

// Calls value(plane, wh, ww) for every output element of `in` pooled by `a` (a global pool: the
// whole plane, stride 1, no padding), `plane` being its (n, c) input plane, and stores the result.
template <typename WindowValue>
void pool_windows(const HostTensor& in, const PoolAttrs& a, HostTensor& out, WindowValue value) {
    const Shape& is = in.shape;
    const Shape& os = out.shape;
    const int kh = a.global ? is.h : a.kernel_h, kw = a.global ? is.w : a.kernel_w;
    const int sh = a.global ? 1 : a.stride_h, sw = a.global ? 1 : a.stride_w;
    const int ph = a.global ? 0 : a.pad_h, pw = a.global ? 0 : a.pad_w;
    const size_t in_pixels = size_t(is.h) * size_t(is.w);
    for (int n = 0; n < is.n; ++n) {
        for (int c = 0; c < is.c; ++c) {
            const size_t channel = size_t(n) * size_t(is.c) + size_t(c);
            const float* plane = in.data.data() + channel * in_pixels;
            for (int oh = 0; oh < os.h; ++oh) {
                const Window wh = window_along(oh, kh, sh, ph, is.h);
                for (int ow = 0; ow < os.w; ++ow)
                    out.at(n, c, oh, ow) = value(plane, wh, window_along(ow, kw, sw, pw, is.w));
            }
        }
    }
}

}  // namespace

void max_pool(const HostTensor& in, const PoolAttrs& a, HostTensor& out) {
    const size_t width = size_t(in.shape.w);
    pool_windows(in, a, out, [&](const float* plane, const Window& wh, const Window& ww) {
        float best = -std::numeric_limits<float>::infinity();
        for (int ih = wh.start; ih < wh.end; ++ih) {
            for (int iw = ww.start; iw < ww.end; ++iw) {
                const float v = plane[size_t(ih) * width + size_t(iw)];
                if (v > best || std::isnan(v)) best = v;
            }
        }
        return best;
    });
}

void avg_pool(const HostTensor& in, const PoolAttrs& a, HostTensor& out) {
    const size_t width = size_t(in.shape.w);
    pool_windows(in, a, out, [&](const float* plane, const Window& wh, const Window& ww) {
        if (wh.start >= wh.end || ww.start >= ww.end) return 0.0f;  // no input: torch writes 0
        float sum = 0.0f;
        for (int ih = wh.start; ih < wh.end; ++ih)
            for (int iw = ww.start; iw < ww.end; ++iw)
                sum += plane[size_t(ih) * width + size_t(iw)];
        const int divisor = a.count_include_pad ? wh.padded_extent * ww.padded_extent
                                                : (wh.end - wh.start) * (ww.end - ww.start);
        return sum / float(divisor);
    });
}

}  // namespace iostune::reference_detail
