#include "src/shape_limits.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace iostune {

std::optional<int64_t> checked_multiply(int64_t a, int64_t b) {
    int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
    return product;
}

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
    int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
    return sum;
}

std::optional<int64_t> checked_product(const std::vector<int64_t>& dims) {
    int64_t product = 1;
    for (int64_t d : dims) {
        const auto next = checked_multiply(product, d);
        if (!next) return std::nullopt;
        product = *next;
    }
    return product;
}

std::string shape_text(const Shape& s) { return fmt::format("{}x{}x{}x{}", s.n, s.c, s.h, s.w); }

std::optional<std::string> tensor_size_problem(const std::vector<int64_t>& dims) {
    for (int64_t d : dims) {
        if (d < 1) return fmt::format("dimension {} is not positive", d);
        if (d > kMaxDimension)
            return fmt::format("dimension {} is more than the {} iostune supports", d,
                               kMaxDimension);
    }
    // Each factor is below 2^31, so the product of four cannot wrap in 128 bits; in 64 it can.
    const auto elements = checked_product(dims);
    if (!elements || *elements > kMaxTensorElements)
        return fmt::format("{} has {} elements, more than the {} of one tensor (cuDNN's limit)",
                           fmt::join(dims, "x"),
                           elements ? fmt::format("{}", *elements) : std::string("over 2^63"),
                           kMaxTensorElements);
    return std::nullopt;
}

}  // namespace iostune
