#include "src/onnx/onnx_tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <limits>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/quoted.h"

namespace iostune::onnx_import {

namespace {

constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

// Decodes `count` little-endian values of type T from raw bytes (x86 and ARM hosts are
// little-endian, as ONNX's raw_data is).
template <class T>
std::vector<T> from_raw(const std::string& raw, int64_t count) {
    std::vector<T> values(static_cast<size_t>(count));
    std::memcpy(values.data(), raw.data(), size_t(count) * sizeof(T));
    return values;
}

template <class Out, class In>
std::vector<Out> convert(const In& in) {
    return std::vector<Out>(in.begin(), in.end());
}

size_t element_size(int type) {
    switch (type) {
        case onnx::TensorProto::FLOAT:
            return 4;
        case onnx::TensorProto::DOUBLE:
            return 8;
        case onnx::TensorProto::INT32:
            return 4;
        case onnx::TensorProto::INT64:
            return 8;
        case onnx::TensorProto::BOOL:
            return 1;
        default:
            return 0;
    }
}

}  // namespace

int64_t ConstTensor::elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

ConstTensor decode_tensor(const onnx::TensorProto& proto, const std::string& where) {
    ConstTensor t;
    t.name = proto.name();
    // Checked here, so every later product of dimensions (elements(), a shape's sizes, which
    // iostune holds as int) stays in range.
    int64_t elements = 1;
    for (int64_t d : proto.dims()) {
        if (d < 0)
            throw Error(fmt::format("{}: tensor {} has a negative dimension", where,
                                    quoted_name(t.name)));
        if (d > kMaxElements || (d > 0 && elements > kMaxElements / d))
            throw Error(fmt::format("{}: tensor {} has shape [{}], more than the {} elements "
                                    "iostune reads in one constant",
                                    where, quoted_name(t.name), fmt::join(proto.dims(), ", "),
                                    kMaxElements));
        elements *= d;
        t.dims.push_back(d);
    }
    if (proto.data_location() == onnx::TensorProto::EXTERNAL)
        throw Error(
            fmt::format("{}: tensor {} keeps its data in an external file, which iostune "
                        "does not read; re-export the model with the weights embedded "
                        "(onnx.save_model(..., save_as_external_data=False))",
                        where, quoted_name(t.name)));
    const int type = proto.data_type();
    const size_t size = element_size(type);
    if (size == 0)
        throw Error(
            fmt::format("{}: tensor {} has element type {} (TensorProto.DataType); "
                        "iostune reads float, double, int32, int64 and bool constants",
                        where, quoted_name(t.name), type));
    const int64_t count = t.elements();
    t.is_float = type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE;

    if (proto.has_raw_data()) {
        const std::string& raw = proto.raw_data();
        if (raw.size() != size_t(count) * size)
            throw Error(fmt::format("{}: tensor {} holds {} bytes of data, its shape needs {}",
                                    where, quoted_name(t.name), raw.size(), size_t(count) * size));
        switch (type) {
            case onnx::TensorProto::FLOAT:
                t.floats = from_raw<float>(raw, count);
                break;
            case onnx::TensorProto::DOUBLE:
                t.floats = convert<float>(from_raw<double>(raw, count));
                break;
            case onnx::TensorProto::INT32:
                t.ints = convert<int64_t>(from_raw<int32_t>(raw, count));
                break;
            case onnx::TensorProto::BOOL:
                t.ints = convert<int64_t>(from_raw<uint8_t>(raw, count));
                break;
            default:
                t.ints = from_raw<int64_t>(raw, count);
                break;
        }
    } else {
        switch (type) {
            case onnx::TensorProto::FLOAT:
                t.floats = convert<float>(proto.float_data());
                break;
            case onnx::TensorProto::DOUBLE:
                t.floats = convert<float>(proto.double_data());
                break;
            case onnx::TensorProto::INT32:
            case onnx::TensorProto::BOOL:
                t.ints = convert<int64_t>(proto.int32_data());
                break;
            default:
                t.ints = convert<int64_t>(proto.int64_data());
                break;
        }
        const size_t got = t.is_float ? t.floats.size() : t.ints.size();
        if (got != size_t(count))
            throw Error(fmt::format("{}: tensor {} holds {} values, its shape needs {}", where,
                                    quoted_name(t.name), got, count));
    }
    return t;
}

}  // namespace iostune::onnx_import
