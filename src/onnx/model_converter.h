// Converts the nodes of a parsed ONNX graph into a DraftGraph, node by node, and finishes it
// into an iostune Graph.
#pragma once

#include <string>

#include "src/graph.h"
#include "src/onnx/onnx_import.h"

namespace onnx {
class ModelProto;
}

namespace iostune::onnx_import {

// `opset` is the model's default-domain opset (already checked to be supported); `source`
// names the model in error messages.
Graph convert_model(const onnx::ModelProto& model, int opset, const std::string& source,
                    const OnnxImportOptions& options);

}  // namespace iostune::onnx_import
