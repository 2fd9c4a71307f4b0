#include "src/model_summary.h"

#include "src/blocks.h"
#include "src/model_json.h"
#include "src/operator_info.h"

namespace iostune {

ModelSummary summarize(const Graph& graph) {
    ModelSummary s;
    s.name = graph.name();
    s.input = graph.input_shape();
    s.ops = graph.size();
    for (int k = 0; k < kOpKindCount; ++k) {
        int count = 0;
        for (const Op& op : graph.ops()) count += op.kind == OpKind(k) ? 1 : 0;
        if (count > 0) s.ops_by_kind.emplace_back(OpKind(k), count);
    }
    const std::vector<Block> blocks = partition_blocks(graph);
    s.blocks = int(blocks.size());
    for (const Block& block : blocks) {
        const int n = int(block.ops.size());
        if (block.width > s.largest_block_width ||
            (block.width == s.largest_block_width && n > s.largest_block_ops)) {
            s.largest_block_ops = n;
            s.largest_block_width = block.width;
        }
    }
    const GraphTotals t = totals(graph);
    s.gflops = double(t.flops) / 1e9;
    s.params = t.params;
    s.fingerprint = fingerprint(graph);
    s.weights = graph.weights_state();
    return s;
}

}  // namespace iostune
