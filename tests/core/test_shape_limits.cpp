// Sizes past what a tensor holds are refused with their value, never wrapped (src/shape_limits.h,
// the 64-bit output sizes of infer_shape), and names are quoted escaped and cut (src/quoted.h).
#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <string>

#include "src/error.h"
#include "src/graph.h"
#include "src/quoted.h"
#include "src/shape_limits.h"

using namespace iostune;
using Catch::Matchers::Contains;

TEST_CASE("checked arithmetic reports what does not fit int64", "[core][limits]") {
    CHECK(checked_multiply(int64_t(1) << 31, int64_t(1) << 31) == int64_t(1) << 62);
    CHECK_FALSE(checked_multiply(int64_t(1) << 32, int64_t(1) << 31));
    CHECK_FALSE(checked_add(INT64_MAX, 1));
    CHECK(checked_add(INT64_MIN, INT64_MAX) == -1);
    CHECK(checked_product({2, 3, 4}) == 24);
    CHECK_FALSE(checked_product({INT_MAX, INT_MAX, INT_MAX}));
}

TEST_CASE("a tensor size past 2^31 - 1 per dimension or in elements is a problem",
          "[core][limits]") {
    CHECK_FALSE(tensor_size_problem({1, 3, 224, 224}));
    CHECK_FALSE(tensor_size_problem({1, 1, 46340, 46340}));  // 2147395600 elements
    CHECK_THAT(*tensor_size_problem({1, 3, 4294967297, 64}), Contains("4294967297"));
    CHECK_THAT(*tensor_size_problem({1, 1, 46341, 46341}), Contains("2147488281 elements"));
    CHECK_THAT(*tensor_size_problem({INT_MAX, INT_MAX, INT_MAX, INT_MAX}),
               Contains("over 2^63 elements"));
    CHECK_THAT(*tensor_size_problem({1, 0, 4, 4}), Contains("0 is not positive"));
}

TEST_CASE("output sizes are computed in 64 bits and refused past int, not wrapped",
          "[core][limits]") {
    Graph g("big", {1, 1, 8, 8});
    ConvAttrs a;
    a.out_channels = 1;
    a.kernel_h = a.kernel_w = 1;
    a.pad_h = INT_MAX / 2 + 1;  // 2 * pad + 8 overflows int: was a negative "output would be"
    CHECK_THROWS_WITH(g.add(OpKind::Conv, a, {kGraphInput}, "conv"),
                      Contains("'conv'") && Contains("too large") && Contains("2147483656"));
    // Two concatenated halves of 2^31 channels.
    Graph c("cat", {1, INT_MAX / 2 + 1, 1, 1});
    CHECK_THROWS_WITH(c.add(OpKind::Concat, ConcatAttrs{}, {kGraphInput, kGraphInput}, "cat"),
                      Contains("2147483648"));
    // A batch that makes one tensor past cuDNN's limit.
    Graph ok("ok", {1, 64, 112, 112});
    ok.add(OpKind::Relu, ReluAttrs{}, {kGraphInput}, "relu");
    CHECK_THROWS_WITH(ok.with_batch(3000), Contains("3000x64x112x112") && Contains("elements"));
    // Weights count as tensors too: a 2^20 x 2^20 kernel.
    ConvAttrs wide;
    wide.out_channels = 1;
    wide.kernel_h = wide.kernel_w = 1 << 20;
    wide.pad_h = wide.pad_w = 1 << 19;
    CHECK_THROWS_WITH(g.add(OpKind::Conv, wide, {kGraphInput}, "wide"),
                      Contains("'wide'") && Contains("weights are too large"));
}

TEST_CASE("quoted names are escaped, cut and one line", "[core][limits]") {
    CHECK(quoted_name("conv1") == "'conv1'");
    CHECK(quoted_name(std::string("a\0b", 3)) == "'a\\x00b'");
    CHECK(quoted_name("\x1b[31mred\n") == "'\\x1b[31mred\\x0a'");
    CHECK(quoted_name("back\\slash") == "'back\\\\slash'");
    CHECK(quoted_name("caf\xc3\xa9") == "'caf\\xc3\\xa9'");
    const std::string cut = quoted_name(std::string(8000, 'Q'));
    CHECK(cut == "'" + std::string(kQuotedMaxChars, 'Q') + "'... (8000 bytes)");
    // Escapes count as the characters they print: 20 NULs take the 80.
    std::string twenty;
    for (int i = 0; i < 20; ++i) twenty += "\\x00";
    CHECK(quoted_name(std::string(30, '\0')) == "'" + twenty + "'... (30 bytes)");
    CHECK(escaped_name("Conv") == "Conv");
    CHECK(escaped_name(std::string(100, 'x')) == std::string(80, 'x') + "... (100 bytes)");
    CHECK(printable("ok \\x00 already\r\n\x07\x1b[2J") == "ok \\x00 already\\x0d\n\\x07\\x1b[2J");
}
