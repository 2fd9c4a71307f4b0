// Typed, checked access to the attributes of one ONNX node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/onnx/onnx_tensor.h"

namespace onnx {
class NodeProto;
}

namespace iostune::onnx_import {

class NodeAttributes {
public:
    // `where` names the node in error messages ("model.onnx: node 'conv1' (Conv, opset 13)").
    NodeAttributes(const onnx::NodeProto& node, std::string where);

    int64_t get_int(const std::string& name, int64_t fallback) const;
    float get_float(const std::string& name, float fallback) const;
    std::string get_string(const std::string& name, const std::string& fallback) const;
    std::vector<int64_t> get_ints(const std::string& name,
                                  const std::vector<int64_t>& fallback) const;
    // A size, pad, stride, dilation or group count: as get_int(s), refused with the value as
    // written (and this node) where its magnitude exceeds what a graph attribute (an int) holds.
    int64_t get_size(const std::string& name, int64_t fallback) const;
    std::vector<int64_t> get_sizes(const std::string& name,
                                   const std::vector<int64_t>& fallback) const;
    std::optional<ConstTensor> get_tensor(const std::string& name) const;
    bool has(const std::string& name) const;

private:
    void check_size(const std::string& name, int64_t value) const;

    const onnx::NodeProto& node_;
    std::string where_;
};

}  // namespace iostune::onnx_import
