// The importer's working graph: ops as the ONNX nodes map to them, before the rewrites that need
// to know every consumer (folding per-channel affine maps, ReLU fusion). Graph ops are immutable once added,
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
    int replaced_by = -1;  // a draft folded away forwards to the op that now computes its tensor
};

class DraftGraph {
public:
    explicit DraftGraph(Shape input) : input_(input) {}

    // Appends an op; infers (and so checks) its shape. Returns its draft id.
    int add(OpKind kind, OpAttrs attrs, std::vector<int> inputs, std::string name,
            std::vector<ParamTensor> params);

    const DraftOp& op(int id) const { return ops_.at(size_t(id)); }
    // Adds `values` (one per output channel) to a Conv's or Linear's bias, creating it if absent:
    // a following Add of a constant.
    void add_bias(int id, std::vector<float> values);
    const Shape& shape(int id) const;  // id may be kGraphInput

    // Folds ChannelAffine maps (batch norms, constant scales and shifts) into the Conv, Linear or
    // GroupNorm before them and ReLUs into the Conv or Add before them (when that op has no other
    // consumer), then emits the ops the outputs depend on; several outputs are named with
    // Graph::set_outputs.
    Graph finish(const std::string& name, const std::vector<int>& outputs);

private:
    int resolve(int id) const;
    std::vector<int> consumer_counts(const std::vector<int>& outputs) const;
    void fold_affines(const std::vector<int>& outputs);
    static void fold_into_norm(const DraftOp& affine, DraftOp& norm);
    void fuse_relus(const std::vector<int>& outputs);

    Shape input_;
    std::vector<DraftOp> ops_;
};

}  // namespace iostune::onnx_import
