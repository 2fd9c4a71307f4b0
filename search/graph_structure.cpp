#include "search/graph_structure.h"

namespace iostune {

bool same_structure(const Graph& a, const Graph& b) {
    if (a.input_shape() != b.input_shape() || a.size() != b.size()) return false;
    for (int id = 0; id < a.size(); ++id) {
        const Op& x = a.op(id);
        const Op& y = b.op(id);
        if (x.kind != y.kind || x.cell != y.cell || x.inputs != y.inputs || x.attrs != y.attrs)
            return false;
    }
    return true;
}

Graph structure_of(const Graph& graph) {
    Graph copy(graph.name(), graph.input_shape());
    for (const Op& op : graph.ops()) copy.add(op.kind, op.attrs, op.inputs, op.name, op.cell);
    return copy;
}

}  // namespace iostune
