// [core] The precision and layout names every layer shares: parsing, what each precision stores,
// the layout an engine uses when nobody chose one, and the schedule-consistency tolerances.
#include <catch2/catch.hpp>

#include <string>

#include "src/error.h"
#include "src/precision.h"
#include "src/tf32.h"
#include "src/tensor_layout.h"

using namespace iostune;

TEST_CASE("precision names round-trip and bad ones are refused", "[core][precision]") {
    for (int p = 0; p < kPrecisionCount; ++p) {
        const auto precision = Precision(p);
        CHECK(precision_from_string(to_string(precision)) == precision);
        CHECK(std::string(precision_names()[p]) == to_string(precision));
    }
    CHECK(std::string(to_string(Precision::Fp16)) == "fp16");
    CHECK_THROWS_WITH(precision_from_string("fp8"),
                      Catch::Contains("unknown precision 'fp8'") &&
                          Catch::Contains("fp32, tf32, fp16 or bf16"));
    CHECK_THROWS_AS(precision_from_string("FP16"), Error);
}

TEST_CASE("what each precision stores and computes with", "[core][precision]") {
    CHECK(element_bytes(Precision::Fp32) == 4);
    CHECK(element_bytes(Precision::Tf32) == 4);
    CHECK(element_bytes(Precision::Fp16) == 2);
    CHECK(element_bytes(Precision::Bf16) == 2);
    CHECK_FALSE(is_half(Precision::Tf32));
    CHECK(is_half(Precision::Bf16));
    CHECK_FALSE(uses_tensor_cores(Precision::Fp32));
    CHECK(uses_tensor_cores(Precision::Tf32));
    // Fewer mantissa bits, a looser bound between two schedules of one model.
    CHECK(schedule_tolerance(Precision::Fp32) < schedule_tolerance(Precision::Tf32));
    CHECK(schedule_tolerance(Precision::Tf32) <= schedule_tolerance(Precision::Fp16));
    CHECK(schedule_tolerance(Precision::Fp16) < schedule_tolerance(Precision::Bf16));
}

TEST_CASE("layout names, and the layout when nobody chose one", "[core][precision]") {
    CHECK(tensor_layout_from_string("nhwc") == TensorLayout::Nhwc);
    CHECK(std::string(to_string(TensorLayout::Nchw)) == "nchw");
    CHECK_THROWS_WITH(tensor_layout_from_string("chw"), Catch::Contains("use nchw or nhwc"));
    // Strict fp32 keeps the CPU reference's layout; tensor-core precisions go channels-last.
    CHECK(default_layout(Precision::Fp32) == TensorLayout::Nchw);
    CHECK(default_layout(Precision::Tf32) == TensorLayout::Nhwc);
    CHECK(default_layout(Precision::Fp16) == TensorLayout::Nhwc);
    CHECK(default_layout(Precision::Bf16) == TensorLayout::Nhwc);
}

TEST_CASE("fp32 values round to the nearest TF32 value", "[core][precision]") {
    // TF32 keeps 10 mantissa bits: 1 + 2^-10 is one, 1 + 2^-11 is halfway between two.
    CHECK(round_to_tf32(1.0f) == 1.0f);
    CHECK(round_to_tf32(1.0f + 0x1p-10f) == 1.0f + 0x1p-10f);
    CHECK(round_to_tf32(1.0f + 0x1p-12f) == 1.0f);               // below half: down
    CHECK(round_to_tf32(1.0f + 0x1p-11f + 0x1p-20f) == 1.0f + 0x1p-10f);  // above half: up
    CHECK(round_to_tf32(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);    // a tie: away from zero
    CHECK(round_to_tf32(-(1.0f + 0x1p-12f)) == -1.0f);           // symmetric in sign
    // Truncation would keep 1.999...; rounding carries into the exponent.
    CHECK(round_to_tf32(2.0f - 0x1p-23f) == 2.0f);
    CHECK(round_to_tf32(0.1f) != 0.1f);
    CHECK(std::fabs(round_to_tf32(0.1f) - 0.1f) <= 0.1f * 0x1p-11f);
    CHECK(std::isinf(round_to_tf32(INFINITY)));
    CHECK(std::isnan(round_to_tf32(NAN)));
}
