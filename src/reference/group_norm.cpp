// Group normalisation (graph.h's GroupNormAttrs): statistics in double over each image's group of
// channels and pixels, two passes (mean, then the mean squared deviation) as the layer norm's.
#include <cmath>
#include <cstddef>

#include "src/reference/kernels.h"

namespace iostune::reference_detail {

void group_norm(const HostTensor& in, const GroupNormAttrs& a, const float* gamma,
                const float* beta, HostTensor& out) {
    const Shape& s = in.shape;
    const size_t per_group = size_t(s.c / a.groups);
    const size_t pixels = size_t(s.h) * size_t(s.w);
    const size_t count = per_group * pixels;  // a group's channels are consecutive planes
    for (int n = 0; n < s.n; ++n)
        for (int g = 0; g < a.groups; ++g) {
            const size_t first = (size_t(n) * size_t(s.c) + size_t(g) * per_group) * pixels;
            const float* x = in.data.data() + first;
            float* y = out.data.data() + first;
            double sum = 0.0;
            for (size_t i = 0; i < count; ++i) sum += x[i];
            const double mean = sum / double(count);
            double squares = 0.0;
            for (size_t i = 0; i < count; ++i) squares += (x[i] - mean) * (x[i] - mean);
            const double inv_std = 1.0 / std::sqrt(squares / double(count) + double(a.eps));
            for (size_t i = 0; i < count; ++i) {
                const size_t c = size_t(g) * per_group + i / pixels;
                y[i] = float((x[i] - mean) * inv_std * gamma[c] + beta[c]);
            }
        }
}

}  // namespace iostune::reference_detail
