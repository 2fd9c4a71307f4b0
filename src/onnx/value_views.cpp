#include "src/onnx/value_views.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

#include "src/error.h"

namespace iostune::onnx_import {

namespace {

using Dims = std::vector<int64_t>;

// The product of dims[first, last), or nullopt past int64 (no tensor has that many elements).
std::optional<int64_t> product(const Dims& dims, size_t first, size_t last) {
    int64_t p = 1;
    for (size_t i = first; i < last && i < dims.size(); ++i) {
        if (dims[i] < 0) return std::nullopt;
        if (dims[i] != 0 && p > std::numeric_limits<int64_t>::max() / dims[i]) return std::nullopt;
        p *= dims[i];
    }
    return p;
}

Dims identity(size_t rank) {
    Dims perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    return perm;
}

bool is_permutation_of(const Dims& perm, size_t rank) {
    if (perm.size() != rank) return false;
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
        if (p < 0 || p >= int64_t(rank) || seen[size_t(p)]) return false;
        seen[size_t(p)] = true;
    }
    return true;
}

}  // namespace

std::vector<int64_t> ViewShape::logical() const {
    if (perm.empty()) return dims;
    Dims out;
    for (int64_t p : perm) out.push_back(dims[size_t(p)]);
    return out;
}

ViewShape normalized(ViewShape view) {
    if (view.perm.empty()) return view;
    // The axes longer than 1, in the order the view reads them: still ascending, the view reads
    // the tensor in order.
    int64_t last = -1;
    for (int64_t p : view.perm) {
        if (view.dims[size_t(p)] == 1) continue;
        if (p < last) return view;
        last = p;
    }
    return ViewShape{view.logical(), {}};
}

std::optional<ViewShape> transposed(const ViewShape& view, const std::vector<int64_t>& perm) {
    if (!is_permutation_of(perm, view.dims.size())) return std::nullopt;
    const Dims base = view.perm.empty() ? identity(view.dims.size()) : view.perm;
    Dims composed;
    for (int64_t p : perm) composed.push_back(base[size_t(p)]);
    return normalized(ViewShape{view.dims, composed});
}

std::optional<std::vector<int64_t>> reshape_target(std::vector<int64_t> target,
                                                   const std::vector<int64_t>& dims,
                                                   bool allow_zero, int64_t batch) {
    const std::optional<int64_t> total = product(dims, 0, dims.size());
    if (!total || target.empty()) return std::nullopt;
    if (target[0] != -1) target[0] = batch;  // the export's batch is ours to bind
    int inferred = -1;
    for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == 0 && !allow_zero && i < dims.size()) target[i] = dims[i];
        if (target[i] == -1) {
            if (inferred >= 0) return std::nullopt;
            inferred = int(i);
        } else if (target[i] < 0) {
            return std::nullopt;
        }
    }
    if (inferred >= 0) {
        Dims known = target;
        known[size_t(inferred)] = 1;
        const std::optional<int64_t> rest = product(known, 0, known.size());
        if (!rest || *rest == 0 || *total % *rest != 0) return std::nullopt;
        target[size_t(inferred)] = *total / *rest;
    }
    if (product(target, 0, target.size()) != total) return std::nullopt;
    return target;
}

std::optional<RadixSoftmaxPlan> plan_radix_softmax(const Shape& shape, const ViewShape& view,
                                                   int axis) {
    const Dims& d = view.dims;
    const Dims perm = view.perm.empty() ? identity(d.size()) : view.perm;
    if (d.empty() || d[0] != shape.n || axis < 1 || axis >= int(d.size())) return std::nullopt;
    const size_t s = size_t(perm[size_t(axis)]);  // the branch axis among the tensor's dims
    if (s == 0) return std::nullopt;
    const auto outer = product(d, 1, s), inner = product(d, s + 1, d.size());
    const int64_t plane = int64_t(shape.h) * shape.w;
    if (!outer || !inner || *inner % plane != 0) return std::nullopt;
    const int64_t r = *inner / plane;
    if (*outer * d[s] * r != shape.c) return std::nullopt;
    RadixSoftmaxPlan plan;
    plan.attrs = RadixSoftmaxAttrs{int(d[s]), int(*outer)};
    // The op writes [N, radix, cardinality, r]: the branch axis moves to the front; the view of
    // its output reads each of the view's axes where that axis went.
    Dims moved{d[0], d[s]};
    for (size_t i = 1; i < d.size(); ++i)
        if (i != s) moved.push_back(d[i]);
    const auto where = [&](int64_t a) -> int64_t {
        if (a == 0) return 0;
        if (size_t(a) == s) return 1;
        return size_t(a) < s ? a + 1 : a;
    };
    Dims moved_perm;
    for (int64_t p : perm) moved_perm.push_back(where(p));
    plan.result = normalized(ViewShape{moved, moved_perm});
    return plan;
}

std::optional<int> channel_branches(const Shape& shape, const ViewShape& view) {
    const Dims& d = view.dims;
    if (view.transposed() || d.size() < 3 || d[0] != shape.n || d[1] < 1 || shape.c % d[1] != 0)
        return std::nullopt;
    return int(d[1]);
}

std::optional<DepthSpaceMatch> match_depth_space(const Shape& shape, const ViewShape& view) {
    const Dims& d = view.dims;
    if (d.size() != 6 || !view.transposed() || d[0] != shape.n) return std::nullopt;
    const Dims& p = view.perm;
    // [N, C, H / b, b, W / b, b]: space split into blocks.
    if (d[1] == shape.c && d[3] == d[5] && d[2] * d[3] == shape.h && d[4] * d[5] == shape.w) {
        const int block = int(d[3]);
        if (p == Dims{0, 1, 3, 5, 2, 4})
            return DepthSpaceMatch{OpKind::SpaceToDepth, {block, BlockOrder::Crd}};
        if (p == Dims{0, 3, 5, 1, 2, 4})
            return DepthSpaceMatch{OpKind::SpaceToDepth, {block, BlockOrder::Dcr}};
    }
    // [N, C / b^2, b, b, H, W] (CRD) and [N, b, b, C / b^2, H, W] (DCR): depth split into blocks.
    if (d[4] == shape.h && d[5] == shape.w) {
        if (d[2] == d[3] && d[1] * d[2] * d[3] == shape.c && p == Dims{0, 1, 4, 2, 5, 3})
            return DepthSpaceMatch{OpKind::DepthToSpace, {int(d[2]), BlockOrder::Crd}};
        if (d[1] == d[2] && d[1] * d[2] * d[3] == shape.c && p == Dims{0, 3, 4, 1, 5, 2})
            return DepthSpaceMatch{OpKind::DepthToSpace, {int(d[1]), BlockOrder::Dcr}};
    }
    return std::nullopt;
}

std::optional<StridedSliceAttrs> strided_slice_of(const Shape& shape,
                                                  const std::vector<int64_t>& starts,
                                                  const std::vector<int64_t>& ends,
                                                  std::vector<int64_t> axes,
                                                  const std::vector<int64_t>& steps,
                                                  const std::string& where) {
    if (axes.empty())
        for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
    if (starts.size() != axes.size() || ends.size() != axes.size() ||
        (!steps.empty() && steps.size() != axes.size()))
        throw Error(fmt::format("{}: starts [{}], ends [{}], axes [{}] and steps [{}] differ in "
                                "length",
                                where, fmt::join(starts, ", "), fmt::join(ends, ", "),
                                fmt::join(axes, ", "), fmt::join(steps, ", ")));
    const std::array<int64_t, 4> extent{shape.n, shape.c, shape.h, shape.w};
    StridedSliceAttrs a{0, 1, shape.c, 0, 1, shape.h, 0, 1, shape.w};
    const std::array<int*, 4> begin{nullptr, &a.c_begin, &a.h_begin, &a.w_begin};
    const std::array<int*, 4> step{nullptr, &a.c_step, &a.h_step, &a.w_step};
    const std::array<int*, 4> count{nullptr, &a.c_count, &a.h_count, &a.w_count};
    std::array<bool, 4> seen{};
    for (size_t k = 0; k < axes.size(); ++k) {
        const int64_t axis = axes[k] < 0 ? axes[k] + 4 : axes[k];
        if (axis < 0 || axis > 3 || seen[size_t(axis)])
            throw Error(fmt::format("{}: axes [{}] are not distinct axes of a 4-D tensor", where,
                                    fmt::join(axes, ", ")));
        seen[size_t(axis)] = true;
        const int64_t size = extent[size_t(axis)];
        // A step beyond the extent reads one element, as the extent itself would.
        int64_t st = steps.empty() ? 1 : std::clamp<int64_t>(steps[k], -size, size);
        if (st == 0) throw Error(fmt::format("{}: a slice step of 0 is not valid ONNX", where));
        int64_t first = starts[k] < 0 ? starts[k] + size : starts[k];
        int64_t end = ends[k] < 0 ? ends[k] + size : ends[k];
        int64_t n = 0;
        if (st > 0) {
            first = std::clamp<int64_t>(first, 0, size);
            end = std::clamp<int64_t>(end, 0, size);
            n = end > first ? 1 + (end - first - 1) / st : 0;
        } else {
            first = std::clamp<int64_t>(first, 0, size - 1);
            end = std::clamp<int64_t>(end, -1, size - 1);
            n = first > end ? 1 + (first - end - 1) / -st : 0;
        }
        if (n == 0) return std::nullopt;
        if (n == 1) st = 1;
        if (axis == 0) {
            if (first != 0 || st != 1 || n != size)
                throw Error(fmt::format("{}: slicing the batch axis is not supported", where));
            continue;
        }
        *begin[size_t(axis)] = int(first);
        *step[size_t(axis)] = int(st);
        *count[size_t(axis)] = int(n);
    }
    return a;
}

StridedSliceAttrs composed(const StridedSliceAttrs& f, const StridedSliceAttrs& t) {
    // Each index `then` reads lies inside `first`'s output, so begins and (for more than one
    // index) steps stay inside the original extent.
    const auto step = [](int first, int then, int count) { return count == 1 ? 1 : first * then; };
    return StridedSliceAttrs{f.c_begin + t.c_begin * f.c_step, step(f.c_step, t.c_step, t.c_count),
                             t.c_count,
                             f.h_begin + t.h_begin * f.h_step, step(f.h_step, t.h_step, t.h_count),
                             t.h_count,
                             f.w_begin + t.w_begin * f.w_step, step(f.w_step, t.w_step, t.w_count),
                             t.w_count};
}

}  // namespace iostune::onnx_import
