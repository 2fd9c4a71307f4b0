// Small hand-built graphs shared by the search tests.
#pragma once

#include <string>

#include "src/graph.h"

namespace iostune::test {

inline ConvAttrs conv(int out_channels, int kernel, bool relu = true) {
    ConvAttrs a;
    a.out_channels = out_channels;
    a.kernel_h = a.kernel_w = kernel;
    a.pad_h = a.pad_w = kernel / 2;
    a.relu = relu;
    return a;
}

// A detector backbone with an FPN in miniature, as torchvision's returns it: three stages
// (strides 1, 2, 4), a lateral 1x1 convolution on each, a top-down path (nearest upsampling
// added to the finer lateral) and a 3x3 convolution per level. Three outputs of different
// shapes, finest first (p2 8x16x16, p3 8x8x8, p4 8x4x4), computed in the opposite order.
inline Graph fpn_like(const std::string& name = "fpn_like") {
    Graph g(name, Shape{1, 3, 16, 16});
    ConvAttrs down = conv(16, 3);
    down.stride_h = down.stride_w = 2;
    const int c2 = g.add(OpKind::Conv, conv(8, 3), {kGraphInput}, "c2");
    const int c3 = g.add(OpKind::Conv, down, {c2}, "c3");
    down.out_channels = 32;
    const int c4 = g.add(OpKind::Conv, down, {c3}, "c4");
    const int lat4 = g.add(OpKind::Conv, conv(8, 1, false), {c4}, "lat4");
    const int lat3 = g.add(OpKind::Conv, conv(8, 1, false), {c3}, "lat3");
    const int lat2 = g.add(OpKind::Conv, conv(8, 1, false), {c2}, "lat2");
    const int up4 = g.add(OpKind::Resize, ResizeAttrs{ResizeMode::Nearest, 8, 8}, {lat4}, "up4");
    const int m3 = g.add(OpKind::Add, AddAttrs{}, {lat3, up4}, "m3");
    const int up3 = g.add(OpKind::Resize, ResizeAttrs{ResizeMode::Nearest, 16, 16}, {m3}, "up3");
    const int m2 = g.add(OpKind::Add, AddAttrs{}, {lat2, up3}, "m2");
    const int p4 = g.add(OpKind::Conv, conv(8, 3, false), {lat4}, "p4");
    const int p3 = g.add(OpKind::Conv, conv(8, 3, false), {m3}, "p3");
    const int p2 = g.add(OpKind::Conv, conv(8, 3, false), {m2}, "p2");
    g.set_outputs({p2, p3, p4});
    return g;
}

// a -> {b, c} -> d (add). Blocks: {a}, {b, c, d}.
inline Graph diamond() {
    Graph g("diamond", Shape{1, 16, 32, 32});
    const int a = g.add(OpKind::Conv, conv(16, 3), {kGraphInput}, "a");
    const int b = g.add(OpKind::Conv, conv(16, 3), {a}, "b");
    const int c = g.add(OpKind::Conv, conv(16, 3), {a}, "c");
    g.add(OpKind::Add, AddAttrs{}, {b, c}, "d");
    return g;
}

// Stem, then an Inception-style block of four branches joined by a concat (width 4):
//   1x1 | 1x1 -> 3x3 | 1x1 -> 3x3 -> 3x3 | avgpool -> 1x1
inline Graph inception_like() {
    Graph g("inception_like", Shape{1, 3, 35, 35});
    const int stem = g.add(OpKind::Conv, conv(64, 3), {kGraphInput}, "stem");
    const int b1 = g.add(OpKind::Conv, conv(32, 1), {stem}, "b1_1x1");
    const int b2a = g.add(OpKind::Conv, conv(24, 1), {stem}, "b2_1x1");
    const int b2b = g.add(OpKind::Conv, conv(32, 3), {b2a}, "b2_3x3");
    const int b3a = g.add(OpKind::Conv, conv(16, 1), {stem}, "b3_1x1");
    const int b3b = g.add(OpKind::Conv, conv(24, 3), {b3a}, "b3_3x3a");
    const int b3c = g.add(OpKind::Conv, conv(32, 3), {b3b}, "b3_3x3b");
    PoolAttrs pool;
    pool.kernel_h = pool.kernel_w = 3;
    pool.pad_h = pool.pad_w = 1;
    pool.count_include_pad = false;
    const int b4p = g.add(OpKind::AvgPool, pool, {stem}, "b4_pool");
    const int b4 = g.add(OpKind::Conv, conv(16, 1), {b4p}, "b4_1x1");
    g.add(OpKind::Concat, ConcatAttrs{}, {b1, b2b, b3c, b4}, "concat");
    return g;
}

// Two ops meet in m and fan out again; x1 is also read at the end, so the block is not cut at m:
//   s -> {x1, x2} -> m -> {y1, y2} -> z = concat(y1, y2, x1)
// Width 2 (chains {x1, m, y1, z}, {x2, y2} skip over m), but a path cover of the transitive
// reduction needs 3 paths.
inline Graph hourglass() {
    Graph g("hourglass", Shape{1, 16, 16, 16});
    const int s = g.add(OpKind::Conv, conv(16, 3), {kGraphInput}, "s");
    const int x1 = g.add(OpKind::Conv, conv(16, 3), {s}, "x1");
    const int x2 = g.add(OpKind::Conv, conv(16, 3), {s}, "x2");
    const int m = g.add(OpKind::Add, AddAttrs{}, {x1, x2}, "m");
    const int y1 = g.add(OpKind::Conv, conv(16, 3), {m}, "y1");
    const int y2 = g.add(OpKind::Conv, conv(16, 1), {m}, "y2");
    g.add(OpKind::Concat, ConcatAttrs{}, {y1, y2, x1}, "z");
    return g;
}

}  // namespace iostune::test
