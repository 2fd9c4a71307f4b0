// A graph of every second-round operator of deployed CNNs (issue 28) in each of its forms, for
// the [gpu] engine tests (test_second_round_ops.cpp).
#pragma once

#include "src/graph.h"

namespace iostune::test {

// A convolution with a fused PReLU (ConvAttrs::prelu).
inline ConvAttrs prelu_conv(int out, int k, bool bias = true, int groups = 1,
                            bool residual = false) {
    ConvAttrs a;
    a.out_channels = out;
    a.kernel_h = a.kernel_w = k;
    a.pad_h = a.pad_w = k / 2;
    a.groups = groups;
    a.bias = bias;
    a.residual = residual;
    a.prelu = true;
    return a;
}

inline StridedSliceAttrs slice(int c0, int cs, int cn, int h0, int hs, int hn, int w0, int ws,
                               int wn) {
    return StridedSliceAttrs{c0, cs, cn, h0, hs, hn, w0, ws, wn};
}

// Each form of each operator, on packed tensors, channel slices (strided inputs) and into concat
// slices (strided outputs), with odd channel counts where packs get narrow:
//   prelu: of the 6-channel input, of a map, of a slice; convolutions with a fused PReLU with a
//     bias (the bias kernel applies it), without one (the PReLU kernel after), depthwise (the
//     engine's kernel in NHWC), residual, 1x1 (cuBLASLt's product in NHWC), two that merge, one
//     written into a concat;
//   group_norm: 4 groups, one per channel (instance norm) of 9 channels of a slice, one group,
//     written into a concat;
//   radix_softmax: ResNeSt's radix 2 and radix 4 x cardinality 2 on pooled vectors, SKNet's radix 3
//     over a map's slice, 18 branches (past the kernel's registers);
//   strided_slice: YOLO's Focus (four slices into a concat), a backwards one, a slice of a slice;
//   depth_to_space / space_to_depth: blocks 2 and 3 in DCR and CRD order;
//   flatten: of a map, of a slice, two into a concat (a multi-scale head's vectors).
inline Graph second_round_ops_graph(int batch) {
    Graph g("second_round_ops", Shape{batch, 6, 9, 11});
    ConvAttrs stem_attrs;
    stem_attrs.out_channels = 16;
    stem_attrs.kernel_h = stem_attrs.kernel_w = 3;
    stem_attrs.pad_h = stem_attrs.pad_w = 1;
    const int stem = g.add(OpKind::Conv, stem_attrs, {kGraphInput}, "stem");
    g.add(OpKind::PRelu, PReluAttrs{}, {kGraphInput}, "prelu_input");
    const int prelu = g.add(OpKind::PRelu, PReluAttrs{}, {stem}, "prelu");
    const int slice9 = g.add(OpKind::ChannelSlice, ChannelSliceAttrs{3, 12}, {stem}, "slice9");
    g.add(OpKind::PRelu, PReluAttrs{}, {slice9}, "prelu_of_slice");

    g.add(OpKind::Conv, prelu_conv(12, 3), {prelu}, "conv_prelu_bias");
    g.add(OpKind::Conv, prelu_conv(10, 3, false), {prelu}, "conv_prelu_no_bias");
    g.add(OpKind::Conv, prelu_conv(16, 3, true, 16), {prelu}, "depthwise_prelu");
    g.add(OpKind::Conv, prelu_conv(16, 1), {prelu}, "pointwise_prelu");
    g.add(OpKind::Conv, prelu_conv(16, 3, true, 1, true), {prelu, stem}, "residual_prelu");
    const int merge_a = g.add(OpKind::Conv, prelu_conv(8, 3), {slice9}, "merge_a");
    const int merge_b = g.add(OpKind::Conv, prelu_conv(6, 3), {slice9}, "merge_b");
    g.add(OpKind::Concat, ConcatAttrs{}, {merge_a, merge_b}, "cat_merged");

    const int gn4 = g.add(OpKind::GroupNorm, GroupNormAttrs{4, 1e-5f}, {stem}, "group_norm4");
    g.add(OpKind::GroupNorm, GroupNormAttrs{9, 1e-5f}, {slice9}, "instance_norm_of_slice");
    const int gn1 = g.add(OpKind::GroupNorm, GroupNormAttrs{1, 1e-3f}, {prelu}, "group_norm1");
    const int into = g.add(OpKind::Conv, prelu_conv(5, 1), {gn4}, "conv_prelu_into_concat");
    g.add(OpKind::Concat, ConcatAttrs{}, {gn1, into}, "cat_norms");

    const int pooled = g.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true},
                             {stem}, "pool");
    g.add(OpKind::RadixSoftmax, RadixSoftmaxAttrs{2, 1}, {pooled}, "rsoftmax_r2");
    g.add(OpKind::RadixSoftmax, RadixSoftmaxAttrs{4, 2}, {pooled}, "rsoftmax_r4_c2");
    g.add(OpKind::RadixSoftmax, RadixSoftmaxAttrs{3, 1}, {slice9}, "sk_softmax_map");
    ConvAttrs wide = stem_attrs;
    wide.out_channels = 18;
    const int conv18 = g.add(OpKind::Conv, wide, {prelu}, "conv18");
    g.add(OpKind::RadixSoftmax, RadixSoftmaxAttrs{18, 1}, {conv18}, "rsoftmax_r18");

    const int a = g.add(OpKind::StridedSlice, slice(0, 1, 6, 0, 2, 5, 0, 2, 6), {kGraphInput},
                        "focus_00");
    const int b = g.add(OpKind::StridedSlice, slice(0, 1, 6, 1, 2, 4, 0, 2, 6), {kGraphInput},
                        "focus_10");
    const int c = g.add(OpKind::StridedSlice, slice(0, 1, 6, 0, 2, 5, 1, 2, 5), {kGraphInput},
                        "focus_01");
    const int d = g.add(OpKind::StridedSlice, slice(0, 1, 6, 1, 2, 4, 1, 2, 5), {kGraphInput},
                        "focus_11");
    const int focus_a = g.add(OpKind::SpatialPad, SpatialPadAttrs{0, 0, 0, -1}, {a}, "crop_a");
    const int focus_b = g.add(OpKind::SpatialPad, SpatialPadAttrs{0, 1, 0, -1}, {b}, "pad_b");
    const int focus_d = g.add(OpKind::SpatialPad, SpatialPadAttrs{0, 1, 0, 0}, {d}, "pad_d");
    g.add(OpKind::Concat, ConcatAttrs{}, {focus_a, focus_b, c, focus_d}, "focus_cat");
    g.add(OpKind::StridedSlice, slice(15, -2, 8, 8, -3, 3, 10, -1, 11), {stem}, "backwards");
    g.add(OpKind::StridedSlice, slice(1, 3, 3, 0, 1, 9, 1, 4, 3), {slice9}, "slice_of_slice");

    const int up_crd = g.add(OpKind::DepthToSpace, DepthSpaceAttrs{2, BlockOrder::Crd}, {stem},
                             "pixel_shuffle");
    g.add(OpKind::DepthToSpace, DepthSpaceAttrs{2, BlockOrder::Dcr}, {stem}, "depth_to_space_dcr");
    g.add(OpKind::SpaceToDepth, DepthSpaceAttrs{2, BlockOrder::Crd}, {up_crd}, "pixel_unshuffle");
    g.add(OpKind::SpaceToDepth, DepthSpaceAttrs{2, BlockOrder::Dcr}, {up_crd},
          "space_to_depth_dcr");
    const int up3 = g.add(OpKind::DepthToSpace, DepthSpaceAttrs{3, BlockOrder::Dcr}, {conv18},
                          "depth_to_space3");
    g.add(OpKind::SpaceToDepth, DepthSpaceAttrs{3, BlockOrder::Crd}, {up3}, "space_to_depth3");

    const int flat_map = g.add(OpKind::Flatten, FlattenAttrs{}, {c}, "flatten_map");
    const int flat_slice = g.add(OpKind::Flatten, FlattenAttrs{}, {slice9}, "flatten_slice");
    const int flat_pool = g.add(OpKind::Flatten, FlattenAttrs{}, {pooled}, "flatten_vector");
    const int head = g.add(OpKind::Concat, ConcatAttrs{}, {flat_map, flat_slice, flat_pool},
                           "head_cat");
    g.add(OpKind::Linear, LinearAttrs{7, true}, {head}, "classifier");
    return g;
}

}  // namespace iostune::test
