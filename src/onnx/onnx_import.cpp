#include "src/onnx/onnx_import.h"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/quoted.h"
#include "src/onnx/model_converter.h"

namespace iostune {

namespace {

constexpr int kMinOpset = 11;
constexpr int kMaxOpset = 17;
constexpr std::uintmax_t kMaxModelBytes = std::uintmax_t(2) << 30;  // protobuf's limit

namespace fs = std::filesystem;

// The path as the user gave it, whole (not a name from the file: never cut), made printable.
std::string shown(const std::string& path) { return fmt::format("'{}'", printable(path)); }

// The default-domain opset the model declares, as written (int64: never cut to int).
int64_t default_opset(const onnx::ModelProto& model, const std::string& source) {
    for (const auto& entry : model.opset_import())
        if (entry.domain().empty() || entry.domain() == "ai.onnx") return entry.version();
    throw Error(
        fmt::format("{}: the model declares no opset for the default ONNX domain; it is "
                    "not a complete ONNX model",
                    source));
}

bool parse_model(const std::string& bytes, const std::string& source, onnx::ModelProto& model) {
    try {
        return model.ParseFromString(bytes);
    } catch (const std::bad_alloc&) {
        throw Error(fmt::format("{}: out of host memory while reading the model", source));
    }
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& source,
                        const OnnxImportOptions& options) {
    onnx::ModelProto model;
    // A truncated message fails to parse; text or other formats fail or, by chance, parse into
    // a message without the fields every ONNX model has (checked below).
    if (!parse_model(bytes, source, model))
        throw Error(
            fmt::format("{}: not a valid ONNX model (protobuf parsing failed: the file is "
                        "truncated, corrupt or not ONNX)",
                        source));
    if (model.ir_version() <= 0 || model.opset_import_size() == 0 || !model.has_graph() ||
        model.graph().node_size() == 0)
        throw Error(
            fmt::format("{}: not an ONNX model (no IR version, opset or graph nodes); the "
                        "file may be truncated or in another format",
                        source));
    const int64_t opset = default_opset(model, source);
    if (opset < kMinOpset || opset > kMaxOpset)
        throw Error(
            fmt::format("{}: opset {} is not supported; iostune imports opsets {} to {} "
                        "(torch.onnx.export(..., opset_version={}))",
                        source, opset, kMinOpset, kMaxOpset, kMaxOpset));
    if (options.batch <= 0)
        throw Error(fmt::format("{}: batch size must be positive, got {}", source, options.batch));
    try {
        return onnx_import::convert_model(model, int(opset), source, options);
    } catch (const std::bad_alloc&) {
        // After the checks, only the model's own constants (folded shapes, weights) are
        // allocated here; a machine without room for them gets a user error, not a crash.
        throw Error(fmt::format("{}: out of host memory while importing the model's constants "
                                "and weights",
                                source));
    }
}

Graph import_onnx_file(const std::string& path, const OnnxImportOptions& options) {
    // Only a regular file of a size protobuf can parse is read: a directory, a device such as
    // /dev/zero or a pipe named .onnx would otherwise fail obscurely or never end.
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status))
        throw Error(fmt::format("cannot open ONNX model {}: no such file", shown(path)));
    if (!fs::is_regular_file(status))
        throw Error(fmt::format("ONNX model {} is not a regular file (a directory, a device or "
                                "a pipe); pass the .onnx file itself",
                                shown(path)));
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw Error(fmt::format("cannot read ONNX model {}: {}", shown(path), ec.message()));
    if (size == 0) throw Error(fmt::format("ONNX model {} is empty", shown(path)));
    if (size > kMaxModelBytes)
        throw Error(fmt::format("ONNX model {} is {} bytes; a protobuf message (an .onnx file "
                                "without external data) is at most 2 GiB",
                                shown(path), size));
    std::ifstream file(path, std::ios::binary);
    if (!file) throw Error(fmt::format("cannot open ONNX model {}", shown(path)));
    std::ostringstream bytes;
    bytes << file.rdbuf();
    if (!file.good() && !file.eof())
        throw Error(fmt::format("cannot read ONNX model {}", shown(path)));
    OnnxImportOptions named = options;
    if (named.name.empty()) named.name = std::filesystem::path(path).stem().string();
    return import_onnx_bytes(bytes.str(), shown(path), named);
}

}  // namespace iostune
