// Where an op's tensor lives on the device: a pointer to its first element plus the NCHW
// extent and the distance between batch items. A packed tensor has batch_stride == c*h*w; a
// channel slice of a wider tensor (a concat input written in place, one op of a merged
// convolution) has the wider tensor's c*h*w and a pointer offset by its first channel.
// Plain C++17 (no graph.h) because the CUDA kernels use it too.
#pragma once

#include <cstdint>

namespace iostune {

struct TensorView {
    float* data = nullptr;
    int n = 0, c = 0, h = 0, w = 0;
    int64_t batch_stride = 0;  // elements

    int64_t elements() const { return int64_t(n) * c * h * w; }
    bool packed() const { return batch_stride == int64_t(c) * h * w; }
    // Channels [first, first + count) of this view.
    TensorView channels(int first, int count) const {
        TensorView v = *this;
        v.data = data + int64_t(first) * h * w;
        v.c = count;
        return v;
    }
    bool same_shape(const TensorView& o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
    bool operator==(const TensorView& o) const {
        return data == o.data && same_shape(o) && batch_stride == o.batch_stride;
    }};

}  // namespace iostune
