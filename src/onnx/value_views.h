// The rules behind the importer's reshaped and transposed views of a tensor (split attention's
// [N, radix, C / radix, H, W], GroupNorm's [N, G, -1], PixelUnshuffle's 6-D view, ...): which
// graph op a node over such a view computes, and the view its result is. Pure functions of
// shapes, so the importer (model_converter.cpp) only wires them up.
//
// A view of a graph tensor of shape [N, C, H, W] is `dims` (batch first), the tensor's elements
// in NCHW order read row-major, then transposed by `perm` (output axis i is dims axis perm[i];
// empty: not transposed).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "src/graph.h"

namespace iostune::onnx_import {

struct ViewShape {
    std::vector<int64_t> dims;
    std::vector<int64_t> perm;  // empty: the identity

    bool transposed() const { return !perm.empty(); }
    // The view's own dims (dims permuted).
    std::vector<int64_t> logical() const;
    bool operator==(const ViewShape&) const = default;
};

// The view with its transpose dropped where it only moves axes of size 1 (the rest keep their
// order): then the logical dims, read row-major, are the tensor's elements in order.
ViewShape normalized(ViewShape view);

// `view` transposed by `perm` (ONNX Transpose: output axis i is input axis perm[i]); nullopt when
// perm is no permutation of the view's axes.
std::optional<ViewShape> transposed(const ViewShape& view, const std::vector<int64_t>& perm);

// ONNX Reshape's target for a tensor of `dims`: 0 copies the dim (unless allowzero), one -1 is
// inferred, and a fixed first dim is the export's batch, replaced by `batch`. nullopt when the
// element counts disagree.
std::optional<std::vector<int64_t>> reshape_target(std::vector<int64_t> target,
                                                   const std::vector<int64_t>& dims,
                                                   bool allow_zero, int64_t batch);

// Softmax over logical axis `axis` (normalised, >= 1) of `view` over a tensor of `shape`, as a
// radix_softmax op: the axis holds the branches, the axes before it (in the tensor's order) the
// cardinal groups, the ones after it whole H x W planes. `result` is the view of the op's output
// that holds the softmax. nullopt when the axis is not such a branch axis.
struct RadixSoftmaxPlan {
    RadixSoftmaxAttrs attrs;
    ViewShape result;
};
std::optional<RadixSoftmaxPlan> plan_radix_softmax(const Shape& shape, const ViewShape& view,
                                                   int axis);

// The branches of a row-major view whose axis 1 splits the channels into `branches` equal runs
// (split attention's [N, radix, C / radix, H, W], summed over axis 1); nullopt otherwise.
std::optional<int> channel_branches(const Shape& shape, const ViewShape& view);

// The depth_to_space or space_to_depth op a 6-D view computes (PixelShuffle and PixelUnshuffle
// as Reshape -> Transpose, before the Reshape back to 4-D), in DCR or CRD order; nullopt for any
// other view.
struct DepthSpaceMatch {
    OpKind kind = OpKind::DepthToSpace;
    DepthSpaceAttrs attrs;
};
std::optional<DepthSpaceMatch> match_depth_space(const Shape& shape, const ViewShape& view);

// ONNX Slice (opset 10+) over a 4-D tensor of `shape` as a strided slice: starts and ends clamped
// as ONNX does, for each axis in `axes` (absent axes are whole); steps default to 1. nullopt when
// an axis is left empty. Throws iostune::Error (with `where`) on malformed axes or a zero step.
std::optional<StridedSliceAttrs> strided_slice_of(const Shape& shape,
                                                  const std::vector<int64_t>& starts,
                                                  const std::vector<int64_t>& ends,
                                                  std::vector<int64_t> axes,
                                                  const std::vector<int64_t>& steps,
                                                  const std::string& where);

// `then` applied to the output of `first`: one strided slice.
StridedSliceAttrs composed(const StridedSliceAttrs& first, const StridedSliceAttrs& then);

}  // namespace iostune::onnx_import
