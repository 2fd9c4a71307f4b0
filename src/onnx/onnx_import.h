// Imports an ONNX model (as torchvision exports CNNs) into the iostune graph IR, with its
// initializers as the graph's weights.
//
// Supported: opsets 11 to 17 of the default domain; Conv, ConvTranspose, BatchNormalization
// (folded into the Conv before it, or a ChannelAffine map when there is none), Relu (fused into a
// Conv or Add that has no other consumer), Clip (ReLU6), Sigmoid, HardSigmoid, HardSwish,
// LeakyRelu, Tanh, Gelu and its decomposed erf form, SiLU (x * sigmoid(x)), MaxPool,
// AveragePool, GlobalAveragePool, GlobalMaxPool, ReduceMean/ReduceMax/ReduceSum over H and W, Pad
// (zeros, any sign: negative pads crop; -inf before a MaxPool), Concat (channels, or flattened
// [N, features] vectors: a flatten op where a map is flattened), Split (channels), Slice
// (channels, H and W; a step other than 1 is a strided_slice op), Add/Sub/Mul/Div
// (tensors with broadcasting such as squeeze-excitation scales, or per-channel and scalar
// constants, folded into the Conv before them where possible), Sum, Gemm, MatMul (+ Add of a
// bias), Flatten/Reshape/Squeeze/Unsqueeze (before the classifier), channel shuffle (Reshape ->
// Transpose -> Reshape), channels-last blocks (Transpose -> LayerNormalization / MatMul /
// arithmetic -> Transpose back, as ConvNeXt), Resize (nearest as PyTorch exports it, bilinear
// with half-pixel or aligned corners), Softmax, PRelu (a prelu op; one shared slope: leakyrelu),
// InstanceNormalization (a group_norm op, a group per channel), DepthToSpace and SpaceToDepth
// (DCR, CRD), Dropout and Identity (as identity), Constant. Reshaped and transposed views of a
// tensor (src/onnx/value_views.h) import as the ops they amount to: PyTorch's GroupNorm (Reshape
// [N, G, -1] -> InstanceNormalization -> Reshape -> Mul, Add) as one group_norm op; ResNeSt's and
// SKNet's split attention (Reshape to [N, radix, C / radix, H, W] or [N, cardinality, radix, r]
// with its Transpose, Softmax across the branches, Mul, ReduceSum over them; torch.stack as
// Unsqueeze + Concat) as a radix_softmax op, binary ops and adds of channel slices;
// PixelUnshuffle's (and PixelShuffle's) 6-D Reshape -> Transpose -> Reshape as space_to_depth
// (depth_to_space). Zero padding and
// crops (Pad, Slice of H/W) fold into the padding of the Conv or pool they feed where that is
// exact, and are a spatial_pad op elsewhere; a Conv's or pool's asymmetric padding keeps its equal
// part and puts the rest in a spatial_pad op (zeros: Conv, an AveragePool that counts padding),
// or becomes ceil_mode (-inf longer at the end: timm's MaxPool2dSame at even sizes). Any node whose
// inputs are all constants or static shapes is evaluated at import (src/onnx/constant_folding.h),
// with the batch as imported (every operator is per sample, so Graph::with_batch() still
// rebinds it). One float32 NCHW input whose batch dimension may be symbolic; one or more
// outputs. Anything else is an iostune::Error naming the node, its op type and the opset; no
// partial model is ever returned.
#pragma once

#include <string>

#include "src/graph.h"

namespace iostune {

struct OnnxImportOptions {
    // Batch size for a symbolic batch dimension. A fixed batch dimension is kept (every
    // supported op is per-sample, so Graph::with_batch() may still change it).
    int batch = 1;
    // Graph name; empty = the file name without its extension.
    std::string name;
};

// Reads and imports the ONNX file at `path`.
Graph import_onnx_file(const std::string& path, const OnnxImportOptions& options = {});

// Imports a serialized ModelProto; `source` names it in error messages.
Graph import_onnx_bytes(const std::string& bytes, const std::string& source,
                        const OnnxImportOptions& options = {});

}  // namespace iostune
