// The importer's working graph: ops as the ONNX nodes map to them, before the rewrites that need
// to know every consumer (batch-norm folding, ReLU fusion). Graph ops are immutable once added,
// so the importer builds a DraftGraph, rewrites it, and only then emits the Graph: a model that
// fails anywhere produces no Graph at all.
#pragma once

#include <string>
#include <vector>

#include "src/graph.h"

namespace iostune::onnx_import {

struct DraftOp {
    OpKind kind = OpKind::Identity;
    OpAttrs attrs;
    std::vector<int> inputs;  // draft ids or kGraphInput
    std::string name;
    std::vector<ParamTensor> params;  // param_shapes() layout
    Shape shape;
    // A BatchNormalization, held as a per-channel affine map in the form of a depthwise 1x1 Conv
    // (weight = scale, bias = shift): folded into the Conv before it when that Conv has no other
    // consumer, and kept as that depthwise Conv otherwise.
    bool batch_norm = false;
    int replaced_by = -1;  // a draft folded away forwards to the op that now computes its tensor
};

class DraftGraph {
public:
    explicit DraftGraph(Shape input) : input_(input) {}

    // Appends an op; infers (and so checks) its shape. Returns its draft id.
    int add(OpKind kind, OpAttrs attrs, std::vector<int> inputs, std::string name,
            std::vector<ParamTensor> params, bool batch_norm = false);

    const DraftOp& op(int id) const { return ops_.at(size_t(id)); }
    // Adds `values` (one per output channel) to a Conv's or Linear's bias, creating it if absent:
    // a following Add of a constant.
    void add_bias(int id, std::vector<float> values);
    const Shape& shape(int id) const;  // id may be kGraphInput

    // Folds batch norms into their convolutions and ReLUs into the Conv or Add before them (when
    // that op has no other consumer), then emits the ops the output depends on.
    Graph finish(const std::string& name, int output);

private:
    int resolve(int id) const;
    std::vector<int> consumer_counts(int output) const;
    void fold_batch_norms(int output);
    void fuse_relus(int output);

    Shape input_;
    std::vector<DraftOp> ops_;
};

}  // namespace iostune::onnx_import
