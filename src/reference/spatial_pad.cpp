// Zero padding and cropping of the spatial axes (graph.h's SpatialPadAttrs).
#include <algorithm>
#include <cstddef>

#include "src/reference/kernels.h"

namespace iostune::reference_detail {

void spatial_pad(const HostTensor& in, const SpatialPadAttrs& a, HostTensor& out) {
    const Shape& s = in.shape;
    const Shape& o = out.shape;
    std::fill(out.data.begin(), out.data.end(), 0.0f);
    // Output columns [x0, x1) read input columns x - left; the rest stay zero.
    const int x0 = std::max(0, a.left), x1 = std::min(o.w, s.w + a.left);
    if (x1 <= x0) return;
    for (int n = 0; n < s.n; ++n)
        for (int c = 0; c < s.c; ++c)
            for (int y = 0; y < o.h; ++y) {
                const int sy = y - a.top;
                if (sy < 0 || sy >= s.h) continue;
                const size_t row = ((size_t(n) * size_t(s.c) + size_t(c)) * size_t(s.h) +
                                     size_t(sy)) * size_t(s.w);
                const float* src = in.data.data() + row + size_t(x0 - a.left);
                std::copy(src, src + (x1 - x0), &out.at(n, c, y, x0));
            }
}

}  // namespace iostune::reference_detail
