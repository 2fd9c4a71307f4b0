#include "replay/model_spec.h"

#include <fmt/format.h>

#include <filesystem>

#include "src/error.h"
#include "src/model_json.h"
#include "src/zoo/zoo.h"

namespace iostune {

Graph load_model_spec(const std::string& spec, int batch) {
    if (batch <= 0) throw Error(fmt::format("batch size must be positive, got {}", batch));
    if (std::filesystem::path(spec).extension() == ".json")
        return load_model(spec).with_batch(batch);
    // Not a model file: the zoo's error lists the valid names and mentions model files.
    return build_zoo_model(spec, batch);
}

}  // namespace iostune
