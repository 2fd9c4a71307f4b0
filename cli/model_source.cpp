#include "cli/model_source.h"

#include <fmt/format.h>

#include <filesystem>

#include "src/error.h"
#include "src/model_json.h"
#include "src/onnx/onnx_import.h"
#include "src/zoo/zoo.h"

namespace iostune::cli {

namespace fs = std::filesystem;

CLI::Option* add_model_option(CLI::App* command, std::string& spec) {
    return command->add_option("-m,--model", spec, kModelOptionHelp)->required();
}

Graph load_model_source(const std::string& spec, int batch) {
    if (batch <= 0) throw Error(fmt::format("batch size must be positive, got {}", batch));
    const std::string extension = fs::path(spec).extension().string();
    if (extension == ".json") return load_model(spec).with_batch(batch);
    if (extension == ".onnx") return import_onnx_file(spec, {batch, ""}).with_batch(batch);
    // Anything that is neither a model file nor a zoo name gets the zoo's error, which lists the
    // valid names and mentions model files.
    std::error_code ec;
    if (!is_zoo_model(spec) && fs::is_regular_file(spec, ec))
        throw Error(fmt::format("'{}': unrecognised model file type '{}' (expected .json or .onnx)", spec,
                                extension));
    return build_zoo_model(spec, batch);
}

}  // namespace iostune::cli
