// A node checked against its op's ONNX schema before the importer reads it: how many inputs and
// outputs it lists, which are required, and its attributes' names, types and flag values. The
// schemas are ONNX's own, dumped from Debian's libonnx at build time (src/onnx/schema_table),
// so the check is what onnx.checker does for these points, without linking libonnx.
#pragma once

#include <string>
#include <vector>

namespace onnx {
class NodeProto;
}

namespace iostune::onnx_import {

struct AttributeSchema {
    const char* name;
    int type;  // onnx::AttributeProto::AttributeType
    bool required;
};

// One version of one default-domain op.
struct OpSchemaEntry {
    const char* op_type;
    int since_version;
    int min_inputs, max_inputs;
    int min_outputs, max_outputs;
    const char* inputs;   // one letter per formal input: 'r' required, 'o' optional, 'v' variadic
    const char* outputs;  // the same for the outputs
    std::vector<AttributeSchema> attributes;
};

// Every version of every default-domain op libonnx knows (generated).
const std::vector<OpSchemaEntry>& onnx_schema_table();

// The schema of `op_type` at `opset`: its latest version at or before it, else (an op newer than
// the model's opset, which iostune still reads) its first; nullptr for an op ONNX does not define.
const OpSchemaEntry* find_op_schema(const std::string& op_type, int opset);

// Throws iostune::Error (prefixed with `where`, which names the node) when a node of the default
// domain lists more or fewer inputs or outputs than its op takes, leaves a required one empty,
// names an attribute twice or one its op does not have (an error, as in onnx.checker: iostune
// does not guess what an unknown attribute would change), gives an attribute another type than
// the schema's, lacks a required attribute, or sets a flag (ceil_mode, keepdims, ...) other than
// 0 or 1. An op ONNX does not define is left to the importer's "cannot import" error.
void check_node_schema(const onnx::NodeProto& node, int opset, const std::string& where);

}  // namespace iostune::onnx_import
