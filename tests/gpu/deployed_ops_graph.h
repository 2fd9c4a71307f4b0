// A graph of every operator of deployed CNNs in each of its forms, for the [gpu] engine tests
// (test_deployed_ops.cpp).
#pragma once

#include "src/graph.h"

namespace iostune::test {

inline ConvAttrs conv(int out, int k, bool relu) {
    return ConvAttrs{out, k, k, 1, 1, k / 2, k / 2, 1, 1, 1, true, relu};
}

inline ActivationAttrs act(ActivationFunction f, float alpha = 0.0f, float beta = 0.0f) {
    return ActivationAttrs{f, alpha, beta};
}

inline ResizeAttrs resize(ResizeMode mode, int h, int w, bool align_corners = false) {
    return ResizeAttrs{mode, h, w, align_corners};
}

// Every new operator and each of its forms: all eight activation functions (one on the graph
// input's 6 channels, where packs are narrow); each binary op, with the [N,C,1,1] operand second
// and first, a [N,1,H,W] operand, and equal shapes; affine maps; shuffles of 2 and 4 groups;
// slices of a map and of a concat, read by a convolution, a concat and a norm; nearest and both
// bilinear resizes up by 2, to a non-integer size and down; transposed convolutions with stride,
// padding, output padding, dilation, groups and bias, one written into a concat slice (a U-Net
// decoder); the channel norm of a map and of a slice; spatial pads and crops (nasnet's shift by a
// pixel before a 1x1 stride-2 pool, of a channel slice, past the input, written into a concat
// slice, of the 6-channel graph input).
inline Graph deployed_ops_graph(int batch) {
    Graph g("deployed_ops", Shape{batch, 6, 9, 11});
    const int relu6_in = g.add(OpKind::Activation, act(ActivationFunction::Clip, 0.0f, 6.0f),
                               {kGraphInput}, "relu6_input");
    const int stem = g.add(OpKind::Conv, conv(16, 3, false), {relu6_in}, "stem");
    const int clip = g.add(OpKind::Activation, act(ActivationFunction::Clip, -0.5f, 0.75f), {stem},
                           "clip");
    const int sigmoid = g.add(OpKind::Activation, act(ActivationFunction::Sigmoid), {stem},
                              "sigmoid");
    const int silu = g.add(OpKind::Activation, act(ActivationFunction::Silu), {stem}, "silu");
    const int hsig = g.add(OpKind::Activation,
                           act(ActivationFunction::HardSigmoid, 1.0f / 6.0f, 0.5f), {stem},
                           "hardsigmoid");
    const int hswish = g.add(OpKind::Activation, act(ActivationFunction::HardSwish), {stem},
                             "hardswish");
    const int leaky = g.add(OpKind::Activation, act(ActivationFunction::LeakyRelu, 0.1f), {stem},
                            "leakyrelu");
    const int gelu = g.add(OpKind::Activation, act(ActivationFunction::Gelu), {stem}, "gelu");
    const int tanh = g.add(OpKind::Activation, act(ActivationFunction::Tanh), {stem}, "tanh");

    // Squeeze-excitation: pool, 1x1 convs, a sigmoid gate broadcast over the map.
    const int pool = g.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {silu},
                           "se_pool");
    const int squeeze = g.add(OpKind::Conv, conv(8, 1, true), {pool}, "se_reduce");
    const int expand = g.add(OpKind::Conv, conv(16, 1, false), {squeeze}, "se_expand");
    const int gate = g.add(OpKind::Activation, act(ActivationFunction::Sigmoid), {expand},
                           "se_gate");
    g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Mul}, {silu, gate}, "mul_scale_second");
    g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Sub}, {gate, hswish}, "sub_scale_first");
    const int plane = g.add(OpKind::Conv, conv(1, 3, false), {stem}, "one_channel");
    g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Add}, {leaky, plane}, "add_plane");
    g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Add}, {clip, tanh}, "add");
    g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Sub}, {stem, sigmoid}, "sub");
    g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Mul}, {gelu, hsig}, "mul");
    g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Div}, {gelu, sigmoid}, "div");
    g.add(OpKind::ChannelAffine, ChannelAffineAttrs{}, {stem}, "affine");
    g.add(OpKind::ChannelAffine, ChannelAffineAttrs{}, {kGraphInput}, "affine_input");

    g.add(OpKind::ChannelShuffle, ChannelShuffleAttrs{2}, {stem}, "shuffle2");
    g.add(OpKind::ChannelShuffle, ChannelShuffleAttrs{4}, {silu}, "shuffle4");
    const int slice = g.add(OpKind::ChannelSlice, ChannelSliceAttrs{4, 12}, {stem}, "slice");
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {clip, tanh}, "cat");  // 32 channels
    const int cat_slice = g.add(OpKind::ChannelSlice, ChannelSliceAttrs{8, 24}, {cat}, "cat_slice");
    const int slice_of_slice =
        g.add(OpKind::ChannelSlice, ChannelSliceAttrs{2, 10}, {cat_slice}, "slice_of_slice");
    g.add(OpKind::Conv, conv(8, 3, true), {cat_slice}, "conv_of_slice");
    g.add(OpKind::Concat, ConcatAttrs{}, {slice, slice_of_slice}, "cat_of_slices");
    g.add(OpKind::Activation, act(ActivationFunction::Tanh), {slice_of_slice}, "tanh_of_slice");
    g.add(OpKind::ChannelNorm, ChannelNormAttrs{1e-6f}, {stem}, "norm");
    g.add(OpKind::ChannelNorm, ChannelNormAttrs{1e-5f}, {cat_slice}, "norm_of_slice");

    g.add(OpKind::Resize, resize(ResizeMode::Nearest, 18, 22), {stem}, "nearest_x2");
    g.add(OpKind::Resize, resize(ResizeMode::Nearest, 13, 17), {stem}, "nearest_13x17");
    g.add(OpKind::Resize, resize(ResizeMode::Nearest, 5, 6), {stem}, "nearest_down");
    const int up = g.add(OpKind::Resize, resize(ResizeMode::Bilinear, 18, 22), {stem},
                         "bilinear_x2");
    g.add(OpKind::Resize, resize(ResizeMode::Bilinear, 13, 17), {slice}, "bilinear_13x17");
    g.add(OpKind::Resize, resize(ResizeMode::Bilinear, 18, 22, true), {stem},
          "bilinear_x2_align_corners");
    g.add(OpKind::Resize, resize(ResizeMode::Bilinear, 13, 17, true), {stem},
          "bilinear_13x17_align_corners");

    const int shift = g.add(OpKind::SpatialPad, SpatialPadAttrs{-1, 1, -1, 1}, {stem},
                            "nasnet_shift");
    g.add(OpKind::AvgPool, PoolAttrs{1, 1, 2, 2, 0, 0, false, false, false}, {shift},
          "nasnet_path_2");
    g.add(OpKind::SpatialPad, SpatialPadAttrs{1, 2, 0, 3}, {slice}, "pad_of_slice");
    g.add(OpKind::SpatialPad, SpatialPadAttrs{0, -3, -12, 4}, {silu}, "crop_past_input");
    const int recrop = g.add(OpKind::SpatialPad, SpatialPadAttrs{2, -2, -1, 1}, {tanh},
                             "pad_into_concat");  // 9x11, written into its concat slice
    g.add(OpKind::Concat, ConcatAttrs{}, {recrop, gelu}, "cat_of_pad");
    g.add(OpKind::SpatialPad, SpatialPadAttrs{3, 0, 1, 2}, {kGraphInput}, "pad_input");

    // (9 - 1) * 2 - 2 + (3 - 1) + 1 + 1 = 18, (11 - 1) * 2 - 2 + 2 + 1 + 1 = 22.
    const int deconv = g.add(OpKind::ConvTranspose,
                             ConvTransposeAttrs{8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, true}, {stem},
                             "deconv_s2_p1_op1_g2");
    g.add(OpKind::ConvTranspose, ConvTransposeAttrs{12, 3, 3, 1, 1, 2, 2, 0, 0, 2, 2, 1, false},
          {silu}, "deconv_dilated");
    const int unet_up = g.add(OpKind::ConvTranspose,
                              ConvTransposeAttrs{16, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, true}, {stem},
                              "deconv_2x2_s2");  // 18x22, written into its concat slice
    const int skip = g.add(OpKind::Conv, conv(8, 3, true), {up}, "skip");
    const int decoder = g.add(OpKind::Concat, ConcatAttrs{}, {unet_up, skip, deconv}, "decoder_cat");
    g.add(OpKind::Conv, conv(8, 3, true), {decoder}, "decoder_conv");
    return g;
}

}  // namespace iostune::test
