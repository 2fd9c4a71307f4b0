// Evaluates, at import time, ONNX nodes whose inputs are all constants: the shape arithmetic
// exporters emit around Reshape, Pad and Resize (Shape -> Gather -> Unsqueeze -> Concat,
// "same" padding with Ceil/Div/Max, ...), so such models import as fixed graphs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/onnx/onnx_tensor.h"

namespace onnx {
class NodeProto;
}

namespace iostune::onnx_import {

// Whether folding knows the op type (default domain).
bool is_foldable(const std::string& op_type);

// The node's outputs computed from its constant inputs (nullptr for an absent optional input).
// `where` names the node in errors; an unsupported attribute or a malformed input is an
// iostune::Error.
std::vector<ConstTensor> fold_node(const onnx::NodeProto& node,
                                   const std::vector<const ConstTensor*>& inputs, int opset,
                                   const std::string& where);

}  // namespace iostune::onnx_import
