// Imports an ONNX model (as torchvision exports CNNs) into the iostune graph IR, with its
// initializers as the graph's weights.
//
// Supported: opsets 11 to 17 of the default domain; Conv, BatchNormalization (folded into the
// Conv before it, or a depthwise 1x1 Conv when there is none), Relu (fused into a Conv or Add
// that has no other consumer), MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, Pad (zeros,
// into a following Conv or AveragePool), Concat (channels), Add/Sum, Gemm, MatMul (+ Add of a
// bias), Flatten/Reshape (before the classifier), Softmax, Dropout and Identity (as identity),
// Constant. One float32 NCHW input whose batch dimension may be symbolic; one output.
// Anything else is an iostune::Error naming the node, its op type and the opset; no partial
// model is ever returned.
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
