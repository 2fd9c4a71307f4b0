// [gpu] A convolution planned to stage its output (cuDNN writes a packed buffer, a copy moves it
// into the op's concat slice) stays staged however it is pointed at new places: a cuDNN
// graph-API plan is built for the packed strides, and writing the slice's strides with it
// computes wrong values. GoogLeNet's inception4e.branch1 (1x1, 528 -> 256 channels into the first
// slice of an 832-channel concat) did, in co-run searches (docs/search-log.md).
#include <catch2/catch.hpp>

#include <optional>

#include "src/engine/conv_step.h"
#include "src/engine/device_buffer.h"
#include "src/error.h"

using namespace iostune;

namespace {
constexpr int kIn = 528, kOut = 256, kConcat = 832, kSide = 14;

DeviceBuffer floats(int channels) { return DeviceBuffer(size_t(channels) * kSide * kSide * 4); }
TensorView nhwc(const DeviceBuffer& b, int channels) {
    return packed_view(b.get(), DType::F32, TensorLayout::Nhwc, 1, channels, kSide, kSide);
}
}  // namespace

TEST_CASE("a convolution staged into its slice stays staged when pointed at new places",
          "[gpu][engine]") {
    const DeviceBuffer input = floats(kIn), weight = floats(kIn);  // (1x1 filter: Cout x Cin)
    const DeviceBuffer concat_a = floats(kConcat), concat_b = floats(kConcat);
    const DeviceBuffer staging_a = floats(kOut), staging_b = floats(kOut);
    const TensorView source = nhwc(input, kIn);
    const TensorView slice_a = nhwc(concat_a, kConcat).channels(0, kOut);
    const TensorView slice_b = nhwc(concat_b, kConcat).channels(0, kOut);
    ConvSpec spec{kOut, kIn, 1, 1, ConvGeometry{}, weight.get(), nullptr, false};

    ConvStep step("op 54", source, slice_a, spec, CUDNN_TENSOR_OP_MATH, false, true,
                  {nullptr, staging_a.get()});
    REQUIRE(step.output_staged());
    REQUIRE(step.output().data == staging_a.get());

    // A staging buffer placed over the very slice it stands in for cannot stage it: refused (the
    // engine plans the op again), and the step is unchanged.
    CHECK_FALSE(step.rebind(source, slice_b, std::nullopt, {nullptr, concat_b.get()}));
    CHECK(step.output().data == staging_a.get());
    CHECK(step.target().data == slice_a.data);

    // Elsewhere it is pointed at its new places and still stages, packed, twice in a row.
    for (const auto& [slice, staging] : {std::pair{&slice_b, &staging_b}, {&slice_a, &staging_a}}) {
        REQUIRE(step.rebind(source, *slice, std::nullopt, {nullptr, staging->get()}));
        CHECK(step.output_staged());
        CHECK(step.output().data == staging->get());
        CHECK(step.output().row_stride == kOut);
        CHECK(step.target().data == slice->data);
        CHECK(step.target().row_stride == kConcat);
    }

    // Planned with such a buffer from the start: an internal error, not a wrong result.
    CHECK_THROWS_AS(ConvStep("op 54", source, slice_b, spec, CUDNN_TENSOR_OP_MATH, false, true,
                             {nullptr, concat_b.get()}),
                    InternalError);
}
