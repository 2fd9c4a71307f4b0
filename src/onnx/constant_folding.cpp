#include "src/onnx/constant_folding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/onnx/node_attributes.h"
#include "src/quoted.h"
#include "src/shape_limits.h"

namespace iostune::onnx_import {

namespace {

const std::set<std::string>& foldable_ops() {
    static const std::set<std::string> ops = {
        "Identity", "Cast",   "Ceil",      "Floor",           "Round",     "Neg",   "Sqrt",
        "Abs",      "Reciprocal", "Add",   "Sub",             "Mul",       "Div",   "Mod",
        "Pow",      "Max",    "Min",       "Clip",            "Equal",     "Less",  "Greater",
        "LessOrEqual", "GreaterOrEqual", "Not", "And",        "Or",        "Xor",   "Where",
        "Gather",   "Unsqueeze", "Squeeze", "Concat",     "Reshape",   "Flatten", "Range",
        "ConstantOfShape", "Slice", "Transpose", "Expand", "Shape", "Size", "ReduceProd",
    };
    return ops;
}

// A constant as numbers: doubles for float tensors, exact int64 for integer ones.
struct Tensor {
    std::vector<int64_t> dims;
    bool is_float = false;
    std::vector<double> f;
    std::vector<int64_t> i;

    int64_t size() const { return is_float ? int64_t(f.size()) : int64_t(i.size()); }
    double real(int64_t k) const { return is_float ? f[size_t(k)] : double(i[size_t(k)]); }
};

Tensor from_const(const ConstTensor& c) {
    Tensor t;
    t.dims = c.dims;
    t.is_float = c.is_float;
    if (c.is_float) t.f.assign(c.floats.begin(), c.floats.end());
    else t.i = c.ints;
    return t;
}

ConstTensor to_const(const Tensor& t, const std::string& name) {
    ConstTensor c;
    c.name = name;
    c.dims = t.dims;
    c.is_float = t.is_float;
    if (t.is_float) c.floats.assign(t.f.begin(), t.f.end());
    else c.ints = t.i;
    return c;
}

// Element count of dims already checked (check_dims) or taken from an existing tensor; a
// product past int64 (only a malformed shape has one) counts as none.
int64_t count(const std::vector<int64_t>& dims) { return checked_product(dims).value_or(-1); }

// Folded tensors are shapes and small weight arithmetic; anything near this is a malformed
// model, refused before it takes the machine's memory.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 28;

// Ops whose result is a boolean (stored as integers 0 and 1).
bool is_comparison(const std::string& op) {
    return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
           op == "GreaterOrEqual";
}
bool is_logical(const std::string& op) { return op == "And" || op == "Or" || op == "Xor"; }

template <typename T>
bool compare(const std::string& op, T x, T y) {
    if (op == "Equal") return x == y;
    if (op == "Less") return x < y;
    if (op == "Greater") return x > y;
    if (op == "LessOrEqual") return x <= y;
    if (op == "GreaterOrEqual") return x >= y;
    if (op == "And") return x != 0 && y != 0;
    if (op == "Xor") return (x != 0) != (y != 0);
    return x != 0 || y != 0;  // Or
}

std::vector<int64_t> strides(const std::vector<int64_t>& dims) {
    std::vector<int64_t> s(dims.size(), 1);
    for (int k = int(dims.size()) - 2; k >= 0; --k) s[size_t(k)] = s[size_t(k) + 1] * dims[size_t(k) + 1];
    return s;
}

class Folder {
public:
    Folder(const onnx::NodeProto& node, const std::vector<const ConstTensor*>& inputs, int opset,
           std::string where)
        : node_(node), inputs_(inputs), opset_(opset), where_(std::move(where)),
          attrs_(node, where_) {}

    std::vector<ConstTensor> run() {
        const std::string& op = node_.op_type();
        Tensor out;
        if (op == "Identity") out = in(0);
        else if (op == "Cast") out = cast();
        else if (op == "Ceil" || op == "Floor" || op == "Round" || op == "Neg" || op == "Sqrt" ||
                 op == "Abs" || op == "Reciprocal" || op == "Not")
            out = unary(op);
        else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" ||
                 op == "Pow" || op == "Max" || op == "Min" || is_comparison(op) || is_logical(op))
            out = binary_chain(op);
        else if (op == "Clip") out = clip();
        else if (op == "Where") out = where();
        else if (op == "Gather") out = gather();
        else if (op == "Unsqueeze") out = unsqueeze();
        else if (op == "Squeeze") out = squeeze();
        else if (op == "Concat") out = concat();
        else if (op == "Reshape") out = reshape();
        else if (op == "Flatten") out = flatten();
        else if (op == "Range") out = range();
        else if (op == "ConstantOfShape") out = constant_of_shape();
        else if (op == "Slice") out = slice();
        else if (op == "Transpose") out = transpose();
        else if (op == "Expand") out = expand();
        else if (op == "Shape") out = shape();
        else if (op == "Size") out = ints({}, {in(0).size()});
        else if (op == "ReduceProd") out = reduce_prod();
        else throw fail(fmt::format("op type {} cannot be folded", quoted_name(op)));
        if (count(out.dims) != out.size()) throw fail("internal: folded size mismatch");
        check_dims(out.dims);
        return {to_const(out, node_.output(0))};
    }

private:
    Error fail(const std::string& why) const {
        return Error(fmt::format("{}: constant folding: {}", where_, why));
    }

    // x op y (Add, Sub, Mul) on integers, refused where it leaves int64: shape arithmetic that
    // wrapped would give a wrong shape without a word.
    int64_t exact(const std::string& op, int64_t x, int64_t y) const {
        int64_t v = 0;
        const bool overflow = op == "Add"   ? __builtin_add_overflow(x, y, &v)
                              : op == "Sub" ? __builtin_sub_overflow(x, y, &v)
                                            : __builtin_mul_overflow(x, y, &v);
        if (overflow) throw fail(fmt::format("integer {} of {} and {} overflows int64", op, x, y));
        return v;
    }
    // A whole double as int64 (a cast or integer power), refused where it does not fit.
    int64_t to_int64(double v) const {
        if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
            throw fail(fmt::format("the value {} does not fit an int64", v));
        return int64_t(v);
    }

    Tensor in(int k) const {
        if (k >= int(inputs_.size()) || !inputs_[size_t(k)])
            throw fail(fmt::format("input {} is missing", k));
        return from_const(*inputs_[size_t(k)]);
    }
    bool has(int k) const { return k < int(inputs_.size()) && inputs_[size_t(k)]; }
    // A shape a folded tensor may take: non-negative dims, a bounded element count.
    void check_dims(const std::vector<int64_t>& dims) const {
        int64_t n = 1;
        for (int64_t d : dims) {
            if (d < 0 || (d > 0 && n > kMaxFoldedElements / d))
                throw fail(fmt::format("a constant of shape [{}] is negative or too large to fold",
                                       fmt::join(dims, ",")));
            n *= d;
        }
    }
    void require_rank(const Tensor& t, size_t rank) const {
        if (t.dims.size() < rank)
            throw fail(fmt::format("{} needs an input of rank {} or more, got rank {}",
                                   node_.op_type(), rank, t.dims.size()));
    }
    std::vector<int64_t> int_list(int k) const {
        const Tensor t = in(k);
        if (t.is_float) throw fail(fmt::format("input {} must be integers", k));
        return t.i;
    }
    static Tensor ints(std::vector<int64_t> dims, std::vector<int64_t> values) {
        Tensor t;
        t.dims = std::move(dims);
        t.i = std::move(values);
        return t;
    }
    int64_t axis(int64_t a, int64_t rank) const {
        if (a < -rank || a >= std::max<int64_t>(rank, 1))
            throw fail(fmt::format("axis {} is out of range for rank {}", a, rank));
        return a < 0 ? a + rank : a;
    }

    Tensor cast() const {
        Tensor t = in(0);
        const int64_t to = attrs_.get_int("to", onnx::TensorProto::FLOAT);
        const bool to_float = to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE ||
                              to == onnx::TensorProto::FLOAT16;
        const bool to_int = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32 ||
                            to == onnx::TensorProto::BOOL;
        if (!to_float && !to_int) throw fail(fmt::format("Cast to type {} is not supported", to));
        if (to_float && !t.is_float) {
            t.f.assign(t.i.begin(), t.i.end());
            t.i.clear();
            t.is_float = true;
        } else if (to_int && t.is_float) {
            for (double v : t.f)
                t.i.push_back(to == onnx::TensorProto::BOOL ? int64_t(v != 0.0)
                                                            : to_int64(std::trunc(v)));
            t.f.clear();
            t.is_float = false;
        } else if (to == onnx::TensorProto::BOOL) {
            for (int64_t& v : t.i) v = v != 0;
        } else if (to == onnx::TensorProto::FLOAT) {
            for (double& v : t.f) v = double(float(v));
        }
        return t;
    }

    Tensor unary(const std::string& op) const {
        Tensor t = in(0);
        if (!t.is_float) {
            for (int64_t& v : t.i) {
                if ((op == "Neg" || op == "Abs") && v == INT64_MIN)
                    throw fail(fmt::format("{} of {} overflows int64", op, v));
                if (op == "Neg") v = -v;
                else if (op == "Abs") v = v < 0 ? -v : v;
                else if (op == "Not") v = v == 0;
                else if (op == "Sqrt" || op == "Reciprocal")
                    throw fail(fmt::format("{} of integers is not supported", op));
            }
            return t;
        }
        for (double& v : t.f) {
            if (op == "Ceil") v = std::ceil(v);
            else if (op == "Floor") v = std::floor(v);
            else if (op == "Round") v = std::nearbyint(v);  // halves to even, as ONNX rounds
            else if (op == "Neg") v = -v;
            else if (op == "Sqrt") v = std::sqrt(v);
            else if (op == "Abs") v = std::abs(v);
            else if (op == "Reciprocal") v = 1.0 / v;
            else throw fail(fmt::format("{} of floats is not supported", op));
        }
        return t;
    }

    // Numpy broadcasting of two shapes.
    std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) const {
        const size_t rank = std::max(a.size(), b.size());
        std::vector<int64_t> out(rank);
        for (size_t k = 0; k < rank; ++k) {
            const int64_t da = k + a.size() >= rank ? a[k + a.size() - rank] : 1;
            const int64_t db = k + b.size() >= rank ? b[k + b.size() - rank] : 1;
            if (da != db && da != 1 && db != 1)
                throw fail(fmt::format("shapes [{}] and [{}] do not broadcast", fmt::join(a, ","),
                                       fmt::join(b, ",")));
            out[k] = da == 1 ? db : da;
        }
        return out;
    }
    // Index into a tensor of `dims` for the flat index `k` of a broadcast output of `out`.
    static int64_t source(int64_t k, const std::vector<int64_t>& out, const std::vector<int64_t>& dims) {
        int64_t index = 0, stride = 1;
        for (int a = int(out.size()) - 1, b = int(dims.size()) - 1; a >= 0; --a, --b) {
            const int64_t coord = k % out[size_t(a)];
            k /= out[size_t(a)];
            if (b >= 0) {
                if (dims[size_t(b)] != 1) index += coord * stride;
                stride *= dims[size_t(b)];
            }
        }
        return index;
    }

    Tensor binary(const std::string& op, const Tensor& a, const Tensor& b) const {
        Tensor out;
        out.dims = broadcast(a.dims, b.dims);
        check_dims(out.dims);  // before computing: two small operands may broadcast to a huge one
        const int64_t n = count(out.dims);
        const bool boolean = is_comparison(op) || is_logical(op);
        out.is_float = (a.is_float || b.is_float) && !boolean;
        // Mod's fmod=0 takes the divisor's sign (Python's %), fmod=1 the dividend's (C's %);
        // ONNX allows only fmod=1 on floats.
        const bool fmod = attrs_.get_int("fmod", 0) != 0;
        if (op == "Mod" && out.is_float && !fmod)
            throw fail("Mod of floats needs fmod=1 (the ONNX rule)");
        for (int64_t k = 0; k < n; ++k) {
            const int64_t ia = source(k, out.dims, a.dims), ib = source(k, out.dims, b.dims);
            if (!a.is_float && !b.is_float) {
                const int64_t x = a.i[size_t(ia)], y = b.i[size_t(ib)];
                int64_t v = 0;
                if ((op == "Div" || op == "Mod") && y == 0)
                    throw fail(fmt::format("integer {} by zero",
                                           op == "Div" ? "division" : "modulo"));
                if (op == "Add" || op == "Sub" || op == "Mul") v = exact(op, x, y);
                else if ((op == "Div" || op == "Mod") && x == INT64_MIN && y == -1)
                    throw fail(fmt::format("integer {} of {} by -1 overflows int64", op, x));
                else if (op == "Div") v = x / y;  // ONNX integer Div truncates, as C++ does
                else if (op == "Mod") {
                    v = x % y;
                    if (!fmod && v != 0 && (v < 0) != (y < 0)) v += y;
                } else if (op == "Pow") v = to_int64(std::round(std::pow(double(x), double(y))));
                else if (op == "Max") v = std::max(x, y);
                else if (op == "Min") v = std::min(x, y);
                else if (boolean) v = compare(op, x, y);
                out.i.push_back(v);
                continue;
            }
            const double x = a.real(ia), y = b.real(ib);
            double v = 0;
            if (op == "Add") v = x + y;
            else if (op == "Sub") v = x - y;
            else if (op == "Mul") v = x * y;
            else if (op == "Div") v = x / y;
            else if (op == "Mod") v = std::fmod(x, y);
            else if (op == "Pow") v = std::pow(x, y);
            else if (op == "Max") v = std::max(x, y);
            else if (op == "Min") v = std::min(x, y);
            if (boolean) out.i.push_back(compare(op, x, y));
            else out.f.push_back(v);
        }
        return out;
    }

    // Max and Min take any number of inputs; the others two.
    Tensor binary_chain(const std::string& op) const {
        Tensor acc = in(0);
        for (int k = 1; k < int(inputs_.size()); ++k) acc = binary(op, acc, in(k));
        return acc;
    }

    // Clip: bounds from the min/max attributes before opset 11, from optional scalar inputs
    // 1 and 2 since; a missing bound leaves that side open. min > max gives max everywhere.
    Tensor clip() const {
        Tensor t = in(0);
        const auto low = clip_bound(t, 1, "min"), high = clip_bound(t, 2, "max");
        for (double& v : t.f) {
            if (low) v = std::max(v, low->f[0]);
            if (high) v = std::min(v, high->f[0]);
        }
        for (int64_t& v : t.i) {
            if (low) v = std::max(v, low->i[0]);
            if (high) v = std::min(v, high->i[0]);
        }
        return t;
    }
    std::optional<Tensor> clip_bound(const Tensor& data, int k, const char* name) const {
        Tensor b;
        if (opset_ < 11) {
            if (!attrs_.has(name)) return std::nullopt;
            b.is_float = true;
            b.f = {double(attrs_.get_float(name, 0.0f))};
        } else {
            if (!has(k)) return std::nullopt;
            b = in(k);
        }
        if (b.size() != 1) throw fail(fmt::format("Clip's {} must be a scalar", name));
        if (b.is_float != data.is_float)
            throw fail(fmt::format("Clip's {} and its input differ in type (float and integer)",
                                   name));
        return b;
    }

    Tensor where() const {
        const Tensor c = in(0), x = in(1), y = in(2);
        Tensor out;
        out.dims = broadcast(broadcast(c.dims, x.dims), y.dims);
        check_dims(out.dims);
        out.is_float = x.is_float || y.is_float;
        for (int64_t k = 0; k < count(out.dims); ++k) {
            const bool take = c.real(source(k, out.dims, c.dims)) != 0.0;
            const Tensor& t = take ? x : y;
            const int64_t s = source(k, out.dims, t.dims);
            if (out.is_float) out.f.push_back(t.real(s));
            else out.i.push_back(t.i[size_t(s)]);
        }
        return out;
    }

    // Copies element `from` of `src` to the end of `dst`.
    static void push(Tensor& dst, const Tensor& src, int64_t from) {
        if (src.is_float) dst.f.push_back(src.f[size_t(from)]);
        else dst.i.push_back(src.i[size_t(from)]);
    }

    Tensor gather() const {
        const Tensor data = in(0);
        const Tensor idx = in(1);
        if (idx.is_float) throw fail("Gather indices must be integers");
        require_rank(data, 1);
        const int64_t rank = int64_t(data.dims.size());
        const int64_t ax = axis(attrs_.get_int("axis", 0), rank);
        int64_t outer = 1, inner = 1;
        for (int64_t k = 0; k < ax; ++k) outer *= data.dims[size_t(k)];
        for (int64_t k = ax + 1; k < rank; ++k) inner *= data.dims[size_t(k)];
        const int64_t extent = data.dims[size_t(ax)];
        Tensor out;
        out.is_float = data.is_float;
        out.dims.assign(data.dims.begin(), data.dims.begin() + ax);
        out.dims.insert(out.dims.end(), idx.dims.begin(), idx.dims.end());
        out.dims.insert(out.dims.end(), data.dims.begin() + ax + 1, data.dims.end());
        check_dims(out.dims);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t j : idx.i) {
                const int64_t at = j < 0 ? j + extent : j;
                if (at < 0 || at >= extent) throw fail(fmt::format("Gather index {} is out of range", j));
                for (int64_t r = 0; r < inner; ++r) push(out, data, (o * extent + at) * inner + r);
            }
        return out;
    }

    std::vector<int64_t> axes_of(int input_index) const {
        if (opset_ >= 13) return has(input_index) ? int_list(input_index) : std::vector<int64_t>{};
        return attrs_.get_ints("axes", {});
    }

    Tensor unsqueeze() const {
        Tensor t = in(0);
        auto axes = axes_of(1);
        const int64_t rank = int64_t(t.dims.size() + axes.size());
        for (int64_t& a : axes) a = axis(a, rank);
        std::sort(axes.begin(), axes.end());
        for (int64_t a : axes) t.dims.insert(t.dims.begin() + a, 1);
        return t;
    }

    Tensor squeeze() const {
        Tensor t = in(0);
        auto axes = axes_of(1);
        const int64_t rank = int64_t(t.dims.size());
        std::vector<int64_t> dims;
        for (int64_t k = 0; k < rank; ++k) {
            bool drop = axes.empty() ? t.dims[size_t(k)] == 1 : false;
            for (int64_t a : axes) drop = drop || axis(a, rank) == k;
            if (drop && t.dims[size_t(k)] != 1) throw fail("Squeeze of an axis whose size is not 1");
            if (!drop) dims.push_back(t.dims[size_t(k)]);
        }
        t.dims = dims;
        return t;
    }

    Tensor concat() const {
        std::vector<Tensor> parts;
        for (int k = 0; k < int(inputs_.size()); ++k) parts.push_back(in(k));
        require_rank(parts[0], 1);
        const int64_t rank = int64_t(parts[0].dims.size());
        const int64_t ax = axis(attrs_.get_int("axis", 0), rank);
        for (const Tensor& p : parts)
            for (int64_t k = 0; k < rank && int64_t(p.dims.size()) == rank; ++k)
                if (k != ax && p.dims[size_t(k)] != parts[0].dims[size_t(k)])
                    throw fail("Concat of tensors whose other dimensions differ");
        Tensor out;
        out.is_float = parts[0].is_float;
        out.dims = parts[0].dims;
        out.dims[size_t(ax)] = 0;
        for (const Tensor& p : parts) {
            if (p.is_float != out.is_float || int64_t(p.dims.size()) != rank)
                throw fail("Concat of tensors of different types or ranks");
            out.dims[size_t(ax)] += p.dims[size_t(ax)];
        }
        int64_t outer = 1;
        for (int64_t k = 0; k < ax; ++k) outer *= out.dims[size_t(k)];
        for (int64_t o = 0; o < outer; ++o)
            for (const Tensor& p : parts) {
                const int64_t block = count(p.dims) / std::max<int64_t>(outer, 1);
                for (int64_t r = 0; r < block; ++r) push(out, p, o * block + r);
            }
        return out;
    }

    Tensor reshape() const {
        Tensor t = in(0);
        std::vector<int64_t> dims = int_list(1);
        for (int64_t d : dims)
            if (d < -1) throw fail(fmt::format("Reshape to a negative size {}", d));
        int inferred = -1;
        int64_t known = 1;
        for (size_t k = 0; k < dims.size(); ++k) {
            if (dims[k] == 0 && attrs_.get_int("allowzero", 0) == 0) {
                if (k >= t.dims.size())
                    throw fail(fmt::format("Reshape copies dimension {} of a rank-{} tensor", k,
                                           t.dims.size()));
                dims[k] = t.dims[k];
            }
            if (dims[k] == -1) inferred = int(k);
            else known = checked_product({known, dims[k]}).value_or(-1);  // -1: matches nothing
        }
        if (inferred >= 0) dims[size_t(inferred)] = known <= 0 ? 0 : t.size() / known;
        if (count(dims) != t.size())
            throw fail(fmt::format("cannot reshape {} values to [{}]", t.size(), fmt::join(dims, ",")));
        t.dims = dims;
        return t;
    }

    Tensor flatten() const {
        Tensor t = in(0);
        const int64_t rank = int64_t(t.dims.size());
        const int64_t ax = axis(attrs_.get_int("axis", 1), rank + 1);
        int64_t outer = 1;
        for (int64_t k = 0; k < ax; ++k) outer *= t.dims[size_t(k)];
        t.dims = {outer, outer == 0 ? 0 : t.size() / outer};
        return t;
    }

    Tensor range() const {
        const Tensor start = in(0), limit = in(1), delta = in(2);
        Tensor out;
        out.is_float = start.is_float;
        const double s = start.real(0), l = limit.real(0), d = delta.real(0);
        if (d == 0) throw fail("Range with delta 0");
        if (start.size() != 1 || limit.size() != 1 || delta.size() != 1)
            throw fail("Range needs scalar start, limit and delta");
        const double steps = std::ceil((l - s) / d);
        if (!(steps < double(kMaxFoldedElements))) throw fail("Range is too long to fold");
        const int64_t n = std::max<int64_t>(0, int64_t(steps));
        for (int64_t k = 0; k < n; ++k) {
            if (out.is_float) out.f.push_back(s + double(k) * d);
            else out.i.push_back(start.i[0] + k * delta.i[0]);
        }
        out.dims = {n};
        return out;
    }

    Tensor constant_of_shape() const {
        Tensor out;
        out.dims = int_list(0);
        check_dims(out.dims);
        const auto value = attrs_.get_tensor("value");
        if (value && value->elements() != 1) throw fail("ConstantOfShape's value must hold one value");
        out.is_float = value ? value->is_float : true;
        const int64_t n = count(out.dims);
        if (out.is_float) out.f.assign(size_t(n), value ? double(value->floats[0]) : 0.0);
        else out.i.assign(size_t(n), value->ints[0]);
        return out;
    }

    Tensor slice() const {
        const Tensor data = in(0);
        const int64_t rank = int64_t(data.dims.size());
        std::vector<int64_t> starts, ends, axes, steps;
        if (opset_ < 10) {
            starts = attrs_.get_ints("starts", {});
            ends = attrs_.get_ints("ends", {});
            axes = attrs_.get_ints("axes", {});
        } else {
            starts = int_list(1);
            ends = int_list(2);
            if (has(3)) axes = int_list(3);
            if (has(4)) steps = int_list(4);
        }
        if (axes.empty())
            for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
        if (steps.empty()) steps.assign(starts.size(), 1);
        if (!starts.empty()) require_rank(data, 1);
        if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
            throw fail("Slice's starts, ends, axes and steps differ in length");
        std::vector<int64_t> begin(size_t(rank), 0), step(size_t(rank), 1), dims = data.dims;
        for (size_t k = 0; k < starts.size(); ++k) {
            const int64_t a = axis(axes[k], rank);
            const int64_t extent = data.dims[size_t(a)];
            const int64_t st = steps[k];
            if (st == 0) throw fail("Slice step 0");
            auto clampv = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
            int64_t b = starts[k] < 0 ? starts[k] + extent : starts[k];
            int64_t e = ends[k] < 0 ? ends[k] + extent : ends[k];
            if (st > 0) {
                b = clampv(b, 0, extent);
                e = clampv(e, 0, extent);
                dims[size_t(a)] = std::max<int64_t>(0, (e - b + st - 1) / st);
            } else {
                b = clampv(b, -1, extent - 1);
                e = clampv(e, -1, extent - 1);
                dims[size_t(a)] = std::max<int64_t>(0, (b - e - st - 1) / -st);
            }
            begin[size_t(a)] = b;
            step[size_t(a)] = st;
        }
        Tensor out;
        out.is_float = data.is_float;
        out.dims = dims;
        const auto src_strides = strides(data.dims);
        const int64_t n = count(dims);
        for (int64_t k = 0; k < n; ++k) {
            int64_t rest = k, from = 0;
            for (int64_t a = rank - 1; a >= 0; --a) {
                const int64_t coord = rest % dims[size_t(a)];
                rest /= dims[size_t(a)];
                from += (begin[size_t(a)] + coord * step[size_t(a)]) * src_strides[size_t(a)];
            }
            push(out, data, from);
        }
        return out;
    }

    Tensor transpose() const {
        const Tensor data = in(0);
        const int64_t rank = int64_t(data.dims.size());
        std::vector<int64_t> perm = attrs_.get_ints("perm", {});
        if (perm.empty())
            for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
        std::vector<int64_t> sorted = perm;
        for (int64_t& p : sorted) p = axis(p, rank);
        std::sort(sorted.begin(), sorted.end());
        for (int64_t k = 0; k < int64_t(sorted.size()); ++k)
            if (sorted[size_t(k)] != k || int64_t(perm.size()) != rank)
                throw fail("Transpose perm is not a permutation of the axes");
        Tensor out;
        out.is_float = data.is_float;
        for (int64_t p : perm) out.dims.push_back(data.dims.at(size_t(axis(p, rank))));
        const auto src_strides = strides(data.dims);
        for (int64_t k = 0; k < count(out.dims); ++k) {
            int64_t rest = k, from = 0;
            for (int64_t a = rank - 1; a >= 0; --a) {
                const int64_t coord = rest % out.dims[size_t(a)];
                rest /= out.dims[size_t(a)];
                from += coord * src_strides[size_t(axis(perm[size_t(a)], rank))];
            }
            push(out, data, from);
        }
        return out;
    }

    Tensor expand() const {
        const Tensor data = in(0);
        Tensor out;
        out.is_float = data.is_float;
        const std::vector<int64_t> target = int_list(1);
        check_dims(target);
        out.dims = broadcast(data.dims, target);
        for (int64_t k = 0; k < count(out.dims); ++k) push(out, data, source(k, out.dims, data.dims));
        return out;
    }

    Tensor shape() const {
        const Tensor t = in(0);
        std::vector<int64_t> dims = t.dims;
        const int64_t rank = int64_t(dims.size());
        int64_t start = attrs_.get_int("start", 0), end = attrs_.get_int("end", rank);
        start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
        end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
        std::vector<int64_t> values(dims.begin() + start, dims.begin() + std::max(start, end));
        return ints({int64_t(values.size())}, values);
    }

    Tensor reduce_prod() const {
        const Tensor t = in(0);
        if (!attrs_.get_ints("axes", {}).empty() || has(1))
            throw fail("ReduceProd over chosen axes is not supported (only over all)");
        Tensor out;
        out.is_float = t.is_float;
        const bool keep = attrs_.get_int("keepdims", 1) != 0;
        out.dims = keep ? std::vector<int64_t>(t.dims.size(), 1) : std::vector<int64_t>{};
        if (t.is_float) {
            double p = 1;
            for (double v : t.f) p *= v;
            out.f = {p};
        } else {
            int64_t p = 1;
            for (int64_t v : t.i) p = exact("Mul", p, v);
            out.i = {p};
        }
        return out;
    }

    const onnx::NodeProto& node_;
    const std::vector<const ConstTensor*>& inputs_;
    int opset_;
    std::string where_;
    NodeAttributes attrs_;
};

}  // namespace

bool is_foldable(const std::string& op_type) { return foldable_ops().count(op_type) > 0; }

std::vector<ConstTensor> fold_node(const onnx::NodeProto& node,
                                   const std::vector<const ConstTensor*>& inputs, int opset,
                                   const std::string& where) {
    return Folder(node, inputs, opset, where).run();
}

}  // namespace iostune::onnx_import
