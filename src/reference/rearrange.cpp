// The operators that move elements without computing: strided slices, depth_to_space and
// space_to_depth (graph.h's DepthSpaceAttrs) and flatten. Each output element is read from one
// input position.
#include <cstddef>

#include "src/reference/kernels.h"

namespace iostune::reference_detail {

namespace {

// The channel of the input that a block offset (by, bx) of channel c comes from (depth_to_space)
// or goes to (space_to_depth); `channels` counts the channels of the side without blocks.
int block_channel(BlockOrder order, int block, int channels, int c, int by, int bx) {
    return order == BlockOrder::Dcr ? (by * block + bx) * channels + c
                                    : (c * block + by) * block + bx;
}

}  // namespace

void strided_slice(const HostTensor& in, const StridedSliceAttrs& a, HostTensor& out) {
    const Shape& o = out.shape;
    for (int n = 0; n < o.n; ++n)
        for (int c = 0; c < o.c; ++c)
            for (int y = 0; y < o.h; ++y)
                for (int x = 0; x < o.w; ++x)
                    out.at(n, c, y, x) = in.at(n, a.c_begin + c * a.c_step,
                                               a.h_begin + y * a.h_step, a.w_begin + x * a.w_step);
}

void depth_to_space(const HostTensor& in, const DepthSpaceAttrs& a, HostTensor& out) {
    const Shape& o = out.shape;
    for (int n = 0; n < o.n; ++n)
        for (int c = 0; c < o.c; ++c)
            for (int y = 0; y < o.h; ++y)
                for (int x = 0; x < o.w; ++x)
                    out.at(n, c, y, x) =
                        in.at(n, block_channel(a.order, a.block, o.c, c, y % a.block, x % a.block),
                              y / a.block, x / a.block);
}

void space_to_depth(const HostTensor& in, const DepthSpaceAttrs& a, HostTensor& out) {
    const Shape& s = in.shape;
    for (int n = 0; n < s.n; ++n)
        for (int c = 0; c < s.c; ++c)
            for (int y = 0; y < s.h; ++y)
                for (int x = 0; x < s.w; ++x)
                    out.at(n, block_channel(a.order, a.block, s.c, c, y % a.block, x % a.block),
                           y / a.block, x / a.block) = in.at(n, c, y, x);
}

void flatten(const HostTensor& in, HostTensor& out) {
    // NCHW order is the flattened order: only the shape changes.
    out.data = in.data;
}

}  // namespace iostune::reference_detail
