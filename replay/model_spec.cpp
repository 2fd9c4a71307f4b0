#include "replay/model_spec.h"

#include <fmt/format.h>

#include <filesystem>

#include "src/error.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/onnx/onnx_import.h"
#include "src/zoo/zoo.h"

namespace iostune {

namespace fs = std::filesystem;

namespace {

Graph load_as_given(const std::string& spec, int batch) {
    const std::string extension = fs::path(spec).extension().string();
    if (extension == ".json") return load_model(spec).with_batch(batch);
    // A symbolic batch dimension is bound to `batch`; a fixed one is re-inferred by with_batch().
    if (extension == ".onnx") return import_onnx_file(spec, {batch, ""}).with_batch(batch);
    // Anything that is neither a model file nor a zoo name gets the zoo's error, which lists the
    // valid names and mentions model files.
    std::error_code ec;
    if (!is_zoo_model(spec) && fs::is_regular_file(spec, ec))
        throw Error(fmt::format("'{}': unrecognised model file type '{}' (expected .json or .onnx)",
                                spec, extension));
    return build_zoo_model(spec, batch);
}

// Whatever fails while a model is read (an unknown name, a missing or malformed file, an
// operator the importer refuses, bad shapes) is the caller's input, so its kind says so: the C
// API and the Python package turn it into their bad-input error.
template <class Load>
Graph as_bad_input(Load load) {
    try {
        return load();
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::General) throw;
        throw Error(e.what(), ErrorKind::BadInput);
    }
}

}  // namespace

Graph load_model_spec(const std::string& spec, int batch, Fusion fusion) {
    return as_bad_input([&] {
        if (batch <= 0) throw Error(fmt::format("batch size must be positive, got {}", batch));
        Graph graph = load_as_given(spec, batch);
        if (fusion == Fusion::None) return graph;
        return fuse_epilogues(graph).graph;
    });
}

Graph load_models(const std::vector<std::string>& specs, int batch, bool shared_input) {
    if (specs.empty())
        throw Error("no model given; pass --model NAME|FILE (several for a set)",
                    ErrorKind::BadInput);
    if (specs.size() == 1) {
        if (shared_input)
            throw Error(fmt::format("--shared-input is for a model set; give --model two or more "
                                    "times (got only '{}')",
                                    specs.front()),
                        ErrorKind::BadInput);
        return load_model_spec(specs.front(), batch);
    }
    std::vector<Graph> models;
    for (const std::string& spec : specs) models.push_back(load_model_spec(spec, batch));
    return as_bad_input([&] {
        return combine_models(models, shared_input ? SetInputs::Shared : SetInputs::Separate);
    });
}

}  // namespace iostune
