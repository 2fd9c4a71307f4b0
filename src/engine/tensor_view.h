// Where an op's tensor lives on the device: a pointer to its first element, the element type,
// the layout, the logical NCHW extent and the distance between rows.
//
// A row is one batch item in NCHW (c*h*w elements) and one pixel in NHWC (c elements). A packed
// tensor has row_stride equal to the row's length; a channel slice of a wider tensor (a concat
// input written in place, one op of a merged convolution) has the wider tensor's row length and a
// pointer offset by its first channel. Plain C++17 (no graph.h) because the CUDA kernels use it
// too.
#pragma once

#include <cstdint>

#include "src/tensor_layout.h"

namespace iostune {

// What one stored element is.
enum class DType { F32, F16, BF16 };

inline int dtype_bytes(DType type) { return type == DType::F32 ? 4 : 2; }
inline const char* to_string(DType type) {
    return type == DType::F32 ? "float" : (type == DType::F16 ? "half" : "bfloat16");
}
// The largest power of two, at most `at_most`, dividing the address: a channel slice starts at
// any element, and cuDNN's and cuBLASLt's heuristics pick vectorised kernels by alignment.
inline uint32_t byte_alignment(const void* p, uint32_t at_most) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    uint32_t a = at_most;
    while (a > 1 && address % a != 0) a /= 2;
    return a;
}

inline DType storage_type(Precision precision) {
    switch (precision) {
        case Precision::Fp16: return DType::F16;
        case Precision::Bf16: return DType::BF16;
        default: return DType::F32;
    }
}

struct TensorView {
    void* data = nullptr;
    DType dtype = DType::F32;
    TensorLayout layout = TensorLayout::Nchw;
    int n = 0, c = 0, h = 0, w = 0;
    int64_t row_stride = 0;  // elements between the starts of consecutive rows

    bool nhwc() const { return layout == TensorLayout::Nhwc; }
    int64_t elements() const { return int64_t(n) * c * h * w; }
    int64_t rows() const { return nhwc() ? int64_t(n) * h * w : int64_t(n); }
    int64_t row_elements() const { return nhwc() ? int64_t(c) : int64_t(c) * h * w; }
    bool packed() const { return row_stride == row_elements(); }
    int element_bytes() const { return dtype_bytes(dtype); }
    // Bytes from the first element of one row to the first of the next / of one row's elements.
    int64_t row_pitch_bytes() const { return row_stride * element_bytes(); }
    int64_t row_bytes() const { return row_elements() * element_bytes(); }
    // Bytes from the view's first byte to just past its last (a strided view spans its gaps).
    int64_t extent_bytes() const {
        return rows() <= 0 ? 0 : (rows() - 1) * row_pitch_bytes() + row_bytes();
    }
    // Whether the view's extent shares a byte with `bytes` bytes at `start`.
    bool overlaps(const void* start, int64_t bytes) const {
        if (start == nullptr || data == nullptr) return false;
        const auto* s = static_cast<const char*>(start);
        const auto* d = static_cast<const char*>(data);
        return s < d + extent_bytes() && d < s + bytes;
    }
    // Element distance between consecutive batch items.
    int64_t batch_stride() const { return nhwc() ? int64_t(h) * w * row_stride : row_stride; }

    // Channels [first, first + count) of this view.
    TensorView channels(int first, int count) const {
        TensorView v = *this;
        const int64_t offset = nhwc() ? int64_t(first) : int64_t(first) * h * w;
        v.data = static_cast<char*>(data) + offset * element_bytes();
        v.c = count;
        return v;
    }
    bool same_shape(const TensorView& o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
    bool operator==(const TensorView& o) const {
        return data == o.data && dtype == o.dtype && layout == o.layout && same_shape(o) &&
               row_stride == o.row_stride;
    }
};

// Whether two views differ in their address only, and not in its alignment (what cuDNN's and
// cuBLASLt's choices depend on): a planned convolution can be pointed from one to the other.
inline bool same_but_address(const TensorView& a, const TensorView& b) {
    return a.dtype == b.dtype && a.layout == b.layout && a.same_shape(b) &&
           a.row_stride == b.row_stride &&
           byte_alignment(a.data, 256) == byte_alignment(b.data, 256);
}

// A packed tensor of the given extent over `data`.
inline TensorView packed_view(void* data, DType dtype, TensorLayout layout, int n, int c, int h,
                              int w) {
    TensorView v{data, dtype, layout, n, c, h, w, 0};
    v.row_stride = v.row_elements();
    return v;
}

}  // namespace iostune
