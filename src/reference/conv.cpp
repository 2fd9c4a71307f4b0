// Convolution as im2col + a cache-blocked matrix product whose inner loop runs over contiguous
// output pixels, so the compiler vectorises it whatever the output width (Inception's 8x8 and
// 17x17 maps would starve a per-row loop).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "src/reference/kernels.h"

namespace iostune::reference_detail {

namespace {

// Output pixels per block: the accumulators of a row block (kRows x kPixelBlock floats) stay in
// L1 while the reduction dimension streams past.
constexpr int kPixelBlock = 256;
constexpr int kRows = 4;

// Unfolds one group's input channels into col[(c, kh, kw)][oh * OW + ow], zeros for padding.
void im2col(const float* x, int channels, int h, int w, const ConvAttrs& s, int oh_count,
            int ow_count, float* col) {
    const size_t pixels = size_t(oh_count) * size_t(ow_count);
    for (int c = 0; c < channels; ++c) {
        const float* plane = x + size_t(c) * size_t(h) * size_t(w);
        for (int ki = 0; ki < s.kernel_h; ++ki) {
            for (int kj = 0; kj < s.kernel_w; ++kj) {
                float* row = col + ((size_t(c) * s.kernel_h + ki) * s.kernel_w + kj) * pixels;
                const int col_off = kj * s.dilation_w - s.pad_w;
                // Output columns whose input column lies inside [0, w).
                int ow_lo = 0;
                while (ow_lo < ow_count && ow_lo * s.stride_w + col_off < 0) ++ow_lo;
                int ow_hi = ow_count;
                while (ow_hi > ow_lo && (ow_hi - 1) * s.stride_w + col_off >= w) --ow_hi;
                for (int oh = 0; oh < oh_count; ++oh) {
                    float* dst = row + size_t(oh) * size_t(ow_count);
                    const int ih = oh * s.stride_h + ki * s.dilation_h - s.pad_h;
                    if (ih < 0 || ih >= h) {
                        std::fill(dst, dst + ow_count, 0.0f);
                        continue;
                    }
                    const float* src = plane + size_t(ih) * size_t(w);
                    std::fill(dst, dst + ow_lo, 0.0f);
                    if (s.stride_w == 1) {
                        std::memcpy(dst + ow_lo, src + ow_lo + col_off,
                                    size_t(ow_hi - ow_lo) * sizeof(float));
                    } else {
                        for (int ow = ow_lo; ow < ow_hi; ++ow)
                            dst[ow] = src[ow * s.stride_w + col_off];
                    }
                    std::fill(dst + ow_hi, dst + ow_count, 0.0f);
                }
            }
        }
    }
}

// out[R rows][pixels p0..p0+pn) = bias + w[R rows][k] * col[k][p], then optional ReLU.
template <int R>
void gemm_rows(const float* w, int k_count, const float* col, size_t pixels, size_t p0, int pn,
               const float* bias, bool relu, float* out) {
    float acc[R][kPixelBlock];
    for (int r = 0; r < R; ++r) std::fill(acc[r], acc[r] + pn, bias ? bias[r] : 0.0f);
    for (int k = 0; k < k_count; ++k) {
        const float* c = col + size_t(k) * pixels + p0;
        float wk[R];
        for (int r = 0; r < R; ++r) wk[r] = w[size_t(r) * size_t(k_count) + size_t(k)];
        for (int p = 0; p < pn; ++p) {
            const float v = c[p];
            for (int r = 0; r < R; ++r) acc[r][p] += wk[r] * v;
        }
    }
    for (int r = 0; r < R; ++r) {
        float* dst = out + size_t(r) * pixels + p0;
        if (relu) {
            for (int p = 0; p < pn; ++p) dst[p] = acc[r][p] < 0.0f ? 0.0f : acc[r][p];
        } else {
            std::copy(acc[r], acc[r] + pn, dst);
        }
    }
}

// out[m][p] = bias[m] + sum_k w[m][k] * col[k][p] for m < rows, p < pixels.
void gemm(const float* w, int rows, int k_count, const float* col, size_t pixels,
          const float* bias, bool relu, float* out) {
    for (size_t p0 = 0; p0 < pixels; p0 += kPixelBlock) {
        const int pn = int(std::min<size_t>(kPixelBlock, pixels - p0));
        int m = 0;
        for (; m + kRows <= rows; m += kRows)
            gemm_rows<kRows>(w + size_t(m) * size_t(k_count), k_count, col, pixels, p0, pn,
                             bias ? bias + m : nullptr, relu, out + size_t(m) * pixels);
        for (; m < rows; ++m)
            gemm_rows<1>(w + size_t(m) * size_t(k_count), k_count, col, pixels, p0, pn,
                         bias ? bias + m : nullptr, relu, out + size_t(m) * pixels);
    }
}

}  // namespace

void conv2d(const HostTensor& in, const float* weight, const float* bias, const ConvAttrs& s,
            HostTensor& out) {
    const Shape& is = in.shape;
    const Shape& os = out.shape;
    const int in_per_group = is.c / s.groups;
    const int out_per_group = s.out_channels / s.groups;
    const int k_count = in_per_group * s.kernel_h * s.kernel_w;
    const size_t in_pixels = size_t(is.h) * size_t(is.w);
    const size_t out_pixels = size_t(os.h) * size_t(os.w);
    // A 1x1, stride-1, unpadded convolution reads its input as the column matrix directly.
    const bool direct = s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 && s.stride_w == 1 &&
                        s.pad_h == 0 && s.pad_w == 0;
    std::vector<float> col(direct ? 0 : size_t(k_count) * out_pixels);
    for (int n = 0; n < is.n; ++n) {
        for (int g = 0; g < s.groups; ++g) {
            const size_t first_in = size_t(n) * size_t(is.c) + size_t(g) * size_t(in_per_group);
            const float* x = in.data.data() + first_in * in_pixels;
            if (!direct) im2col(x, in_per_group, is.h, is.w, s, os.h, os.w, col.data());
            const int oc0 = g * out_per_group;
            gemm(weight + size_t(oc0) * size_t(k_count), out_per_group, k_count,
                 direct ? x : col.data(), out_pixels, bias ? bias + oc0 : nullptr, s.relu,
                 out.data.data() + (size_t(n) * size_t(os.c) + size_t(oc0)) * out_pixels);
        }
    }
}

}  // namespace iostune::reference_detail
