#include "src/onnx/onnx_import.h"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/onnx/model_converter.h"

namespace iostune {

namespace {

constexpr int kMinOpset = 11;
constexpr int kMaxOpset = 17;
constexpr std::uintmax_t kMaxModelBytes = std::uintmax_t(2) << 30;  // protobuf's limit

namespace fs = std::filesystem;

// The default-domain opset the model declares.
int default_opset(const onnx::ModelProto& model, const std::string& source) {
    for (const auto& entry : model.opset_import())
        if (entry.domain().empty() || entry.domain() == "ai.onnx") return int(entry.version());
    throw Error(
        fmt::format("{}: the model declares no opset for the default ONNX domain; it is "
                    "not a complete ONNX model",
                    source));
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& source,
                        const OnnxImportOptions& options) {
    onnx::ModelProto model;
    // A truncated message fails to parse; text or other formats fail or, by chance, parse into
    // a message without the fields every ONNX model has (checked below).
    if (!model.ParseFromString(bytes))
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
    const int opset = default_opset(model, source);
    if (opset < kMinOpset || opset > kMaxOpset)
        throw Error(
            fmt::format("{}: opset {} is not supported; iostune imports opsets {} to {} "
                        "(torch.onnx.export(..., opset_version={}))",
                        source, opset, kMinOpset, kMaxOpset, kMaxOpset));
    if (options.batch <= 0)
        throw Error(fmt::format("{}: batch size must be positive, got {}", source, options.batch));
    return onnx_import::convert_model(model, opset, source, options);
}

Graph import_onnx_file(const std::string& path, const OnnxImportOptions& options) {
    // Only a regular file of a size protobuf can parse is read: a directory, a device such as
    // /dev/zero or a pipe named .onnx would otherwise fail obscurely or never end.
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) throw Error(fmt::format("cannot open ONNX model '{}': no such file", path));
    if (!fs::is_regular_file(status))
        throw Error(fmt::format("ONNX model '{}' is not a regular file (a directory, a device or "
                                "a pipe); pass the .onnx file itself",
                                path));
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw Error(fmt::format("cannot read ONNX model '{}': {}", path, ec.message()));
    if (size == 0) throw Error(fmt::format("ONNX model '{}' is empty", path));
    if (size > kMaxModelBytes)
        throw Error(fmt::format("ONNX model '{}' is {} bytes; a protobuf message (an .onnx file "
                                "without external data) is at most 2 GiB",
                                path, size));
    std::ifstream file(path, std::ios::binary);
    if (!file) throw Error(fmt::format("cannot open ONNX model '{}'", path));
    std::ostringstream bytes;
    bytes << file.rdbuf();
    if (!file.good() && !file.eof()) throw Error(fmt::format("cannot read ONNX model '{}'", path));
    OnnxImportOptions named = options;
    if (named.name.empty()) named.name = std::filesystem::path(path).stem().string();
    return import_onnx_bytes(bytes.str(), fmt::format("'{}'", path), named);
}

}  // namespace iostune
