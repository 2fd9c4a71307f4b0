// A host-side NCHW float32 tensor: the currency of the CPU reference and of engine I/O.
#pragma once

#include <vector>

#include "src/graph.h"

namespace iostune {

struct HostTensor {
    Shape shape;
    std::vector<float> data;

    HostTensor() = default;
    explicit HostTensor(Shape s, float fill = 0.0f) : shape(s), data(size_t(s.elements()), fill) {}
    float& at(int n, int c, int h, int w) {
        return data[((size_t(n) * size_t(shape.c) + size_t(c)) * size_t(shape.h) + size_t(h)) *
                        size_t(shape.w) + size_t(w)];
    }
    float at(int n, int c, int h, int w) const {
        return data[((size_t(n) * size_t(shape.c) + size_t(c)) * size_t(shape.h) + size_t(h)) *
                        size_t(shape.w) + size_t(w)];
    }
};

}  // namespace iostune
