// The sizes iostune's tensors may have, and the checked 64-bit arithmetic that keeps a size read
// from a file from wrapping on its way there. A Shape holds int dimensions and cuDNN's tensors at
// most 2^31 - 1 elements, so a value beyond either is refused where it is read, as it was
// written, never cut to 32 bits.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "src/graph.h"

namespace iostune {

// Largest dimension, pad, stride, dilation or kernel size (a Shape's and the attributes' int).
constexpr int64_t kMaxDimension = std::numeric_limits<int32_t>::max();
// Largest element count of one tensor at its batch (cuDNN's legacy tensors: 2^31 - 1).
constexpr int64_t kMaxTensorElements = std::numeric_limits<int32_t>::max();

// a * b and a + b, or nullopt where the result does not fit int64.
std::optional<int64_t> checked_multiply(int64_t a, int64_t b);
std::optional<int64_t> checked_add(int64_t a, int64_t b);

// The product of `dims`, or nullopt where it does not fit int64.
std::optional<int64_t> checked_product(const std::vector<int64_t>& dims);

// "1x3x224x224".
std::string shape_text(const Shape& s);

// Why a shape of these (int64) dimensions cannot be an iostune tensor: a dimension below 1 or
// above kMaxDimension, or more than kMaxTensorElements elements; nullopt if it can be one.
std::optional<std::string> tensor_size_problem(const std::vector<int64_t>& dims);

}  // namespace iostune
