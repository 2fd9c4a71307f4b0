// Builds small ONNX models in C++ (the generated onnx.pb.h of iostune_onnx), for tests that need
// no PyTorch: the ONNX suite's importer cases and the [gpu] replay of an imported model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "onnx.pb.h"

namespace iostune::onnx_test {

// Builds a ModelProto node by node: one float input named "x" ([batch?, c, h, w], batch
// symbolic when 0), one output (the last node's first output), float initializers.
class ModelBuilder {
public:
    ModelBuilder(int64_t batch, int64_t c, int64_t h, int64_t w, int opset = 13) {
        model_.set_ir_version(8);
        model_.set_producer_name("iostune-test");
        auto* entry = model_.add_opset_import();
        entry->set_domain("");
        entry->set_version(opset);
        auto* in = model_.mutable_graph()->add_input();
        in->set_name("x");
        auto* tensor = in->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(onnx::TensorProto::FLOAT);
        auto* shape = tensor->mutable_shape();
        for (int64_t d : {batch, c, h, w}) {
            auto* dim = shape->add_dim();
            if (d > 0)
                dim->set_dim_value(d);
            else
                dim->set_dim_param("N");
        }
    }

    onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs,
                          const std::string& output, const std::string& name = "") {
        auto* n = model_.mutable_graph()->add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? output + "_node" : name);
        for (const auto& i : inputs) n->add_input(i);
        n->add_output(output);
        last_output_ = output;
        return *n;
    }

    void initializer(const std::string& name, std::vector<int64_t> dims,
                     std::vector<float> values) {
        auto* t = model_.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : dims) t->add_dims(d);
        for (float v : values) t->add_float_data(v);
    }
    void int_initializer(const std::string& name, std::vector<int64_t> values) {
        auto* t = model_.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(int64_t(values.size()));
        for (int64_t v : values) t->add_int64_data(v);
    }

    static void ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> values) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : values) a->add_ints(v);
    }
    static void integer(onnx::NodeProto& n, const std::string& name, int64_t value) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(value);
    }

    onnx::ModelProto& model() { return model_; }

    std::string bytes() {
        auto& graph = *model_.mutable_graph();
        graph.clear_output();
        graph.add_output()->set_name(last_output_);
        return model_.SerializeAsString();
    }

private:
    onnx::ModelProto model_;
    std::string last_output_;
};

// Values 0.1, 0.2, ... (distinct, so a misplaced weight changes the result).
inline std::vector<float> ramp(size_t n, float step = 0.1f, float start = 0.1f) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = start + step * float(i);
    return v;
}

}  // namespace iostune::onnx_test
