#include "src/blocks.h"

#include <algorithm>
#include <functional>

#include "src/operator_info.h"

namespace iostune {

namespace {

// reach[i][j]: op ops[j] depends (transitively) on op ops[i], both inside the block.
std::vector<std::vector<bool>> block_reachability(const Graph& graph, const std::vector<int>& ops) {
    const size_t n = ops.size();
    std::vector<int> local(size_t(graph.size()), -1);
    for (size_t i = 0; i < n; ++i) local[size_t(ops[i])] = int(i);
    // Ancestors through the whole graph, restricted to block ops, in id (topological) order.
    std::vector<std::vector<bool>> anc(size_t(graph.size()), std::vector<bool>(n, false));
    for (const Op& op : graph.ops()) {
        auto& mine = anc[size_t(op.id)];
        for (int src : op.inputs) {
            if (is_graph_input(src)) continue;
            const auto& theirs = anc[size_t(src)];
            for (size_t k = 0; k < n; ++k)
                if (theirs[k]) mine[k] = true;
            if (local[size_t(src)] >= 0) mine[size_t(local[size_t(src)])] = true;
        }
    }
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    for (size_t j = 0; j < n; ++j)
        for (size_t i = 0; i < n; ++i)
            if (anc[size_t(ops[j])][i]) reach[i][j] = true;
    return reach;
}

}  // namespace

int antichain_width(const Graph& graph, const std::vector<int>& ops) {
    const auto reach = block_reachability(graph, ops);
    const int n = int(ops.size());
    std::vector<int> match_right(size_t(n), -1);
    std::function<bool(int, std::vector<bool>&)> augment = [&](int u, std::vector<bool>& seen) {
        for (int v = 0; v < n; ++v) {
            if (!reach[size_t(u)][size_t(v)] || seen[size_t(v)]) continue;
            seen[size_t(v)] = true;
            if (match_right[size_t(v)] < 0 || augment(match_right[size_t(v)], seen)) {
                match_right[size_t(v)] = u;
                return true;
            }
        }
        return false;
    };
    int matching = 0;
    for (int u = 0; u < n; ++u) {
        std::vector<bool> seen(size_t(n), false);
        if (augment(u, seen)) ++matching;
    }
    return n - matching;
}

namespace {

// Cuts ops [first, end) (one model, or one member of a set, which reads only its own ops and
// graph inputs) at single-tensor cut points and cell changes; widths are not yet filled in.
std::vector<Block> cut_range(const Graph& graph, int first, int end) {
    const int n = graph.size();
    // last_use[t]: the last op reading tensor t (any graph input at index n).
    std::vector<int> last_use(size_t(n) + 1, -1);
    for (int id = first; id < end; ++id)
        for (int src : graph.op(id).inputs)
            last_use[is_graph_input(src) ? size_t(n) : size_t(src)] = id;

    std::vector<Block> blocks;
    Block current;
    int live_beyond = last_use[size_t(n)];  // furthest reader of any tensor produced so far
    for (int i = first; i < end; ++i) {
        current.ops.push_back(i);
        const bool last = i == end - 1;
        // Tensors other than op i's output that are still needed after op i.
        const bool single_tensor_cut = live_beyond <= i;
        const bool cell_change = !last && graph.op(i).cell != graph.op(i + 1).cell;
        if (last || single_tensor_cut || cell_change) {
            blocks.push_back(std::move(current));
            current = Block{};
        }
        live_beyond = std::max(live_beyond, last_use[size_t(i)]);
    }
    return blocks;
}

// Each block's cost and the fraction of its member's total latency at which it ends.
std::vector<double> block_ends(const std::vector<Block>& blocks, const OpLatency& latency) {
    std::vector<double> ends;
    double total = 0;
    for (const Block& b : blocks) {
        for (int id : b.ops) total += std::max(0.0, latency(id));
        ends.push_back(total);
    }
    for (size_t b = 0; b < ends.size(); ++b)
        ends[b] = total > 0 ? ends[b] / total : double(b + 1) / double(ends.size());
    return ends;
}

// The members' blocks aligned into super-blocks by cumulative latency (blocks.h): the member
// with the most blocks sets the super-blocks' boundaries (its block ends, as fractions of its
// latency), and every other member's block goes where its middle falls. Identical members thus
// advance exactly in lockstep.
std::vector<Block> align_members(const Graph& graph, const OpLatency& latency) {
    std::vector<std::vector<Block>> member_blocks;
    size_t pace = 0;  // the member whose blocks set the boundaries
    for (const GraphMember& m : graph.members()) {
        member_blocks.push_back(cut_range(graph, m.first_op, m.end_op));
        if (member_blocks.back().size() > member_blocks[pace].size())
            pace = member_blocks.size() - 1;
    }
    const std::vector<double> boundaries = block_ends(member_blocks[pace], latency);
    std::vector<Block> super(boundaries.size());
    for (size_t m = 0; m < member_blocks.size(); ++m) {
        const auto& blocks = member_blocks[m];
        const std::vector<double> ends = block_ends(blocks, latency);
        for (size_t b = 0; b < blocks.size(); ++b) {
            size_t j = b;  // the pacing member's own blocks are the super-blocks
            if (m != pace) {
                const double middle = ((b == 0 ? 0.0 : ends[b - 1]) + ends[b]) / 2;
                j = size_t(std::upper_bound(boundaries.begin(), boundaries.end(), middle) -
                           boundaries.begin());
                j = std::min(j, super.size() - 1);
            }
            auto& ops = super[j].ops;
            ops.insert(ops.end(), blocks[b].ops.begin(), blocks[b].ops.end());
        }
    }
    std::vector<Block> out;
    for (Block& b : super) {
        if (b.ops.empty()) continue;
        std::sort(b.ops.begin(), b.ops.end());
        out.push_back(std::move(b));
    }
    return out;
}

}  // namespace

double proxy_op_latency_us(const Graph& graph, int id) {
    constexpr double kLaunchUs = 3.0;           // a kernel launch inside a CUDA graph, roughly
    constexpr double kFlopsPerUs = 400e12 / 1e6;  // nominal dense tensor-core rate
    constexpr double kBytesPerUs = 3e12 / 1e6;    // nominal HBM3 bandwidth
    return kLaunchUs + std::max(double(flops(graph, id)) / kFlopsPerUs,
                                double(bytes_moved(graph, id)) / kBytesPerUs);
}

std::vector<Block> partition_blocks(const Graph& graph, const OpLatency& latency) {
    std::vector<Block> blocks;
    if (graph.members().empty()) {
        blocks = cut_range(graph, 0, graph.size());
    } else {
        blocks = align_members(graph, latency ? latency : [&graph](int id) {
            return proxy_op_latency_us(graph, id);
        });
    }
    for (size_t i = 0; i < blocks.size(); ++i) {
        blocks[i].index = int(i);
        blocks[i].width = antichain_width(graph, blocks[i].ops);
    }
    return blocks;
}

}  // namespace iostune
