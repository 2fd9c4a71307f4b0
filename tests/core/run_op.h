// Runs one op of the CPU reference on given tensors, for op-level tests (the op reads graph
// inputs only; reference_op infers the output shape from the tensors).
#pragma once

#include <utility>
#include <vector>

#include "src/graph.h"
#include "src/reference/reference.h"
#include "src/tensor.h"

namespace iostune::test {

inline HostTensor run_op(OpKind kind, OpAttrs attrs, const std::vector<HostTensor>& inputs,
                         const std::vector<ParamTensor>& params = {}) {
    Op op;
    op.name = "op";
    op.kind = kind;
    op.attrs = std::move(attrs);
    std::vector<const HostTensor*> ptrs;
    for (const HostTensor& t : inputs) ptrs.push_back(&t);
    op.inputs.assign(inputs.size(), kGraphInput);
    return reference_op(op, ptrs, params);
}

}  // namespace iostune::test
