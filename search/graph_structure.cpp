#include "search/graph_structure.h"

namespace iostune {

bool same_structure(const Graph& a, const Graph& b) {
    if (a.input_count() != b.input_count() || a.size() != b.size() || a.outputs() != b.outputs() ||
        a.members() != b.members())
        return false;
    for (int k = 0; k < a.input_count(); ++k)
        if (a.input_shape(k) != b.input_shape(k)) return false;
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
    for (int k = 1; k < graph.input_count(); ++k) copy.add_input(graph.input_shape(k));
    for (const Op& op : graph.ops()) copy.add(op.kind, op.attrs, op.inputs, op.name, op.cell);
    copy.set_outputs(graph.outputs());
    copy.set_members(graph.members());
    return copy;
}

}  // namespace iostune
