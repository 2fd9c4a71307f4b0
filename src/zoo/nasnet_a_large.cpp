// NASNet-A Large (6 @ 4032) at 331x331, layer for layer as timm's `nasnetalarge`
// (timm/models/nasnet.py, itself from Cadene's pretrained-models), batch norms folded.
//
// Representation choices:
// - BranchSeparables (ReLU -> sepconv -> BN -> ReLU -> sepconv -> BN) is two SepConv ops with a
//   pre-ReLU and a folded-BN bias; the first carries the stride.
// - ActConvBn (ReLU -> 1x1 conv -> BN) is a Relu op and a Conv, since Conv has no
//   pre-activation. Each cell rectifies the previous cells' outputs itself, as timm does, so the
//   Relu belongs to the consuming cell.
// - The factorized reduction (ReLU -> two 1x1-stride-2 paths -> concat -> BN) folds the BN into
//   the two path convolutions. timm's path 2 shifts its input by one pixel first
//   (ZeroPad2d((-1, 1, -1, 1))); the IR has no shift op, so path 2 is an AvgPool 1x1 stride 2 on
//   the unshifted input: same shapes and FLOPs, slightly different values.
// - timm pads stride-2 windows TF-"same" (asymmetric on even inputs); here every window is
//   padded k/2 on both sides, which gives the same shapes and FLOPs.
// - Pools are count_include_pad=False as in timm; identity branches add the tensor directly.
//
// Every op carries its cell index: conv0 is cell 0, cell_stem_0/1 cells 1-2, the 18 normal and
// 2 reduction cells follow in forward order, and the classifier head is the last cell.
#include <fmt/format.h>

#include <string>

#include "src/zoo/cell_builder.h"
#include "src/zoo/zoo.h"

namespace iostune {

namespace {

using zoo_cells::CellBuilder;

constexpr int kInputSize = 331;
constexpr int kStemChannels = 96;
constexpr int kPenultimateFilters = 4032;
constexpr int kCellChannels = kPenultimateFilters / 24;  // 168
constexpr int kClasses = 1000;

// BranchSeparables(in -> out, kernel, stride); the middle width is `mid` (= out in the stem's
// wide-input branches, = in elsewhere).
int branch(CellBuilder& b, int input, int mid, int out, int kernel, int stride, const std::string& name) {
    const int first = b.sep_conv(input, mid, kernel, stride, name + ".separable_1");
    return b.sep_conv(first, out, kernel, 1, name + ".separable_2");
}

// ActConvBn 1x1.
int act_conv_bn(CellBuilder& b, int input, int out, const std::string& name) {
    return b.conv(b.relu(input, name + ".act"), out, 1, 1, 0, name + ".conv");
}

// FirstCell / CellStem1's path_1 + path_2 + final_path_bn: halves the resolution of the
// previous-previous cell's output; `half` channels per path.
int factorized_reduction(CellBuilder& b, int input, int half) {
    const int x = b.relu(input, "act");
    const int path1 = b.conv(b.avg_pool(x, 1, 2, 0, "path_1.avgpool"), half, 1, 1, 0, "path_1.conv");
    // Approximates timm's one-pixel shift (see the file comment).
    const int path2 = b.conv(b.avg_pool(x, 1, 2, 0, "path_2.avgpool"), half, 1, 1, 0, "path_2.conv");
    return b.concat({path1, path2}, "final_path");
}

// The shared body of CellStem0/1 and ReductionCell0/1: `a` is the input the pools read
// (x_right; CellStem0's x1), `c` the other one (x_left; CellStem0's x). Returns the concat of
// comb_iter_1..4, 4 x `ch` channels at half resolution.
int reduction_body(CellBuilder& b, int a, int c, int ch) {
    const int l0 = branch(b, a, ch, ch, 5, 2, "comb_iter_0_left");
    const int r0 = branch(b, c, ch, ch, 7, 2, "comb_iter_0_right");
    const int c0 = b.sum({l0, r0}, "comb_iter_0");
    const int l1 = b.max_pool(a, 3, 2, 1, "comb_iter_1_left");
    const int r1 = branch(b, c, ch, ch, 7, 2, "comb_iter_1_right");
    const int c1 = b.sum({l1, r1}, "comb_iter_1");
    const int l2 = b.avg_pool(a, 3, 2, 1, "comb_iter_2_left");
    const int r2 = branch(b, c, ch, ch, 5, 2, "comb_iter_2_right");
    const int c2 = b.sum({l2, r2}, "comb_iter_2");
    const int r3 = b.avg_pool(c0, 3, 1, 1, "comb_iter_3_right");
    const int c3 = b.sum({r3, c1}, "comb_iter_3");
    const int l4 = branch(b, c0, ch, ch, 3, 1, "comb_iter_4_left");
    const int r4 = b.max_pool(a, 3, 2, 1, "comb_iter_4_right");
    const int c4 = b.sum({l4, r4}, "comb_iter_4");
    return b.concat({c1, c2, c3, c4}, "cat");
}

// NormalCell / FirstCell body on the adjusted inputs `left` (from x_prev) and `right` (from x),
// both `ch` channels at the same resolution. Returns 6 x `ch` channels.
int normal_body(CellBuilder& b, int left, int right, int ch) {
    const int l0 = branch(b, right, ch, ch, 5, 1, "comb_iter_0_left");
    const int r0 = branch(b, left, ch, ch, 3, 1, "comb_iter_0_right");
    const int c0 = b.sum({l0, r0}, "comb_iter_0");
    const int l1 = branch(b, left, ch, ch, 5, 1, "comb_iter_1_left");
    const int r1 = branch(b, left, ch, ch, 3, 1, "comb_iter_1_right");
    const int c1 = b.sum({l1, r1}, "comb_iter_1");
    const int l2 = b.avg_pool(right, 3, 1, 1, "comb_iter_2_left");
    const int c2 = b.sum({l2, left}, "comb_iter_2");
    const int l3 = b.avg_pool(left, 3, 1, 1, "comb_iter_3_left");
    const int r3 = b.avg_pool(left, 3, 1, 1, "comb_iter_3_right");
    const int c3 = b.sum({l3, r3}, "comb_iter_3");
    const int l4 = branch(b, right, ch, ch, 3, 1, "comb_iter_4_left");
    const int c4 = b.sum({l4, right}, "comb_iter_4");
    return b.concat({left, c0, c1, c2, c3, c4}, "cat");
}

// A stack of one FirstCell and five NormalCells at `ch` channels; x/x_prev are the two
// previous cells' outputs and are updated in place. `first` numbers the cells (cell_<first>..).
void normal_stack(CellBuilder& b, int& x, int& x_prev, int ch, int first) {
    for (int i = 0; i < 6; ++i) {
        b.begin_cell(fmt::format("cell_{}", first + i));
        // FirstCell halves x_prev's resolution (it comes from before the reduction).
        const int left = i == 0 ? factorized_reduction(b, x_prev, ch / 2)
                                : act_conv_bn(b, x_prev, ch, "conv_prev_1x1");
        const int right = act_conv_bn(b, x, ch, "conv_1x1");
        const int out = normal_body(b, left, right, ch);
        x_prev = x;
        x = out;
    }
}

// ReductionCell<index> on the two previous cells' outputs, `ch` channels per branch.
void reduction_cell(CellBuilder& b, int& x, int& x_prev, int ch, int index) {
    b.begin_cell(fmt::format("reduction_cell_{}", index));
    const int left = act_conv_bn(b, x_prev, ch, "conv_prev_1x1");
    const int right = act_conv_bn(b, x, ch, "conv_1x1");
    const int out = reduction_body(b, right, left, ch);
    x_prev = x;
    x = out;
}

}  // namespace

Graph build_nasnet_a_large(int batch) {
    Graph g("nasnet_a_large", {batch, 3, kInputSize, kInputSize});
    CellBuilder b(g);
    constexpr int ch = kCellChannels;

    b.begin_cell("conv0");
    const int conv0 = b.conv(kGraphInput, kStemChannels, 3, 2, 0, "conv");

    b.begin_cell("cell_stem_0");
    const int x1 = act_conv_bn(b, conv0, ch / 4, "conv_1x1");
    const int stem0 = reduction_body(b, x1, conv0, ch / 4);

    b.begin_cell("cell_stem_1");
    const int stem1_left = act_conv_bn(b, stem0, ch / 2, "conv_1x1");
    const int stem1_right = factorized_reduction(b, conv0, ch / 4);
    const int stem1 = reduction_body(b, stem1_left, stem1_right, ch / 2);

    int x = stem1;
    int x_prev = stem0;
    normal_stack(b, x, x_prev, ch, 0);
    reduction_cell(b, x, x_prev, 2 * ch, 0);
    normal_stack(b, x, x_prev, 2 * ch, 6);
    reduction_cell(b, x, x_prev, 4 * ch, 1);
    normal_stack(b, x, x_prev, 4 * ch, 12);

    b.begin_cell("head");
    x = b.relu(x, "act");
    x = b.global_avg_pool(x, "global_pool");
    b.linear(x, kClasses, "last_linear");
    return g;
}

}  // namespace iostune
