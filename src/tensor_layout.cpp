#include "src/tensor_layout.h"

#include <fmt/format.h>

#include "src/error.h"

namespace iostune {

const char* to_string(TensorLayout layout) { return layout == TensorLayout::Nhwc ? "nhwc" : "nchw"; }

TensorLayout tensor_layout_from_string(const std::string& name) {
    if (name == "nchw") return TensorLayout::Nchw;
    if (name == "nhwc") return TensorLayout::Nhwc;
    throw Error(fmt::format("unknown tensor layout '{}'; use nchw or nhwc", name));
}

TensorLayout default_layout(Precision precision) {
    return uses_tensor_cores(precision) ? TensorLayout::Nhwc : TensorLayout::Nchw;
}

}  // namespace iostune
