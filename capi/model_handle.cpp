#include "capi/model_handle.h"

#include <fmt/format.h>

#include <memory>

#include "capi/api_status.h"
#include "replay/model_spec.h"
#include "src/model_json.h"

using namespace iostune;

iostune::Graph iostune_model::at_batch(int other) const {
    if (other == batch) return graph;
    return load_models({spec}, other, false);
}

namespace iostune::capi {

const iostune_model& model_ref(const iostune_model* model, const char* call) {
    require(model != nullptr, fmt::format("{}: the model is NULL; load one with iostune_model_load", call));
    return *model;
}

namespace {

iostune_status shape_of(const iostune_model* model, int index, int dims[4], bool input) {
    return guarded([&] {
        const iostune_model& m = model_ref(model, input ? "iostune_model_input_shape"
                                                        : "iostune_model_output_shape");
        require(dims != nullptr, "the dims array is NULL");
        const int count = input ? m.graph.input_count() : m.graph.output_count();
        require(index >= 0 && index < count,
                fmt::format("'{}' has {} {}(s); there is no {} {}", m.name, count,
                            input ? "input" : "output", input ? "input" : "output", index));
        const Shape s = input ? m.graph.input_shape(index)
                              : m.graph.op(m.graph.outputs()[size_t(index)]).output;
        dims[0] = s.n;
        dims[1] = s.c;
        dims[2] = s.h;
        dims[3] = s.w;
    });
}

}  // namespace

}  // namespace iostune::capi

extern "C" {

iostune_status iostune_model_load(const char* spec, int batch, iostune_model** model) {
    return capi::guarded([&] {
        capi::require(model != nullptr, "iostune_model_load: the output pointer is NULL");
        *model = nullptr;
        capi::require(spec != nullptr && *spec != '\0',
                      "iostune_model_load: no model given; pass a zoo name or a .json/.onnx file");
        auto loaded = std::make_unique<iostune_model>(
            iostune_model{spec, batch, load_models({spec}, batch, false), "", ""});
        loaded->name = loaded->graph.name();
        loaded->fingerprint = fingerprint(loaded->graph);
        *model = loaded.release();
    });
}

void iostune_model_free(iostune_model* model) { delete model; }

const char* iostune_model_name(const iostune_model* model) {
    return model != nullptr ? model->name.c_str() : "";
}
const char* iostune_model_fingerprint(const iostune_model* model) {
    return model != nullptr ? model->fingerprint.c_str() : "";
}
int iostune_model_batch(const iostune_model* model) { return model != nullptr ? model->batch : 0; }
int iostune_model_input_count(const iostune_model* model) {
    return model != nullptr ? model->graph.input_count() : 0;
}
int iostune_model_output_count(const iostune_model* model) {
    return model != nullptr ? model->graph.output_count() : 0;
}
iostune_status iostune_model_input_shape(const iostune_model* model, int index, int dims[4]) {
    return capi::shape_of(model, index, dims, true);
}
iostune_status iostune_model_output_shape(const iostune_model* model, int index, int dims[4]) {
    return capi::shape_of(model, index, dims, false);
}

}  // extern "C"
