// Constant tensors of an ONNX model (initializers, Constant nodes) decoded from their protobuf
// form into host memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace iostune::onnx_import {

// A decoded constant. Floating-point data (float, double) lands in `floats`, integer data
// (int64, int32, bool) in `ints`; exactly one of them is filled.
struct ConstTensor {
    std::string name;
    std::vector<int64_t> dims;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    bool is_float = true;

    int64_t elements() const;
};

// Decodes `proto` (raw_data or the typed repeated fields). `where` names it in errors.
// Throws iostune::Error for external data, unsupported element types and size mismatches.
ConstTensor decode_tensor(const onnx::TensorProto& proto, const std::string& where);

}  // namespace iostune::onnx_import
