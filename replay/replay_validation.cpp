#include "replay/replay_validation.h"

#include <fmt/format.h>

#include <utility>

#include "src/conv_choices.h"
#include "src/error.h"
#include "src/model_set.h"
#include "src/output_agreement.h"
#include "src/tensor_layout.h"
#include "src/weights.h"

namespace iostune {

ReplayValidation compare_with_sequential(const Graph& graph,
                                         const std::vector<HostTensor>& replayed,
                                         const std::vector<HostTensor>& sequential,
                                         Precision precision) {
    const int outputs = graph.output_count();
    if (int(replayed.size()) != outputs || int(sequential.size()) != outputs)
        throw Error(fmt::format("validating '{}': {} replayed and {} sequential outputs for a "
                                "graph with {}; the replay is inconsistent",
                                graph.name(), replayed.size(), sequential.size(), outputs));
    const bool set = !graph.members().empty();
    ReplayValidation result;
    result.outputs = outputs;
    double closest_ratio = -1;
    for (int k = 0; k < outputs; ++k) {
        require_finite_reference(sequential[size_t(k)], precision, name_output(graph, k));
        const OutputAgreement a =
            output_agreement(replayed[size_t(k)], sequential[size_t(k)], precision);
        if (!a.agrees())
            throw Error(fmt::format(
                "validation failed: the replayed schedule's {} differs from {} by up to {:.3g} "
                "(tolerance {:.3g})",
                describe_output(graph, k),
                set ? "that model's sequential schedule run alone" : "the sequential schedule's",
                a.max_abs_diff, a.tolerance));
        if (a.max_abs_diff / a.tolerance > closest_ratio) {
            closest_ratio = a.max_abs_diff / a.tolerance;
            result.closest = k;
            result.max_abs_diff = a.max_abs_diff;
            result.tolerance = a.tolerance;
        }
    }
    return result;
}

std::vector<HostTensor> sequential_outputs(const Graph& graph,
                                           const std::vector<HostTensor>& inputs,
                                           const EngineOptions& options) {
    if (graph.members().empty()) {
        Engine engine(graph, options);
        for (int k = 0; k < graph.input_count(); ++k) engine.set_input(k, inputs.at(size_t(k)));
        // As a graph, as production runs: captured, no library kernel overlaps the one before
        // it (graph_edges.h), which launched eagerly it may.
        const CudaGraphExec exec = engine.capture(sequential_schedule(engine.graph()));
        exec.launch(engine.origin_stream());
        return engine.read_outputs();
    }
    std::vector<HostTensor> outputs;
    for (int m = 0; m < int(graph.members().size()); ++m) {
        const int input = graph_input_index(graph.members()[size_t(m)].input);
        std::vector<HostTensor> alone =
            sequential_outputs(member_graph(graph, m), {inputs.at(size_t(input))}, options);
        for (HostTensor& t : alone) outputs.push_back(std::move(t));
    }
    return outputs;
}

ReplayValidation validate_replay(Replayer& replayer, const Graph& graph) {
    const ReplayInfo& info = replayer.info();
    if (info.native_io)
        throw Error("validation compares float outputs; build the Replayer without native_io "
                    "(drop --native-io) to validate the schedule");
    std::vector<HostTensor> inputs;
    for (int k = 0; k < graph.input_count(); ++k)
        inputs.push_back(random_input(graph.input_shape(k), 11 + uint64_t(k)));
    std::vector<HostTensor> replayed;
    for (int id : graph.outputs()) replayed.emplace_back(graph.op(id).output);
    if (replayer.output_count() != int(replayed.size()))
        throw Error(fmt::format("validating '{}': the Replayer returns {} output(s), the graph "
                                "has {}; build both from the same models",
                                graph.name(), replayer.output_count(), replayed.size()));
    for (size_t k = 0; k < replayed.size(); ++k)
        if (replayer.output_elements(int(k)) != replayed[k].data.size())
            throw Error(fmt::format("validating '{}': the Replayer's {} holds {} values, the "
                                    "graph's {}; build both from the same models and batch",
                                    graph.name(), describe_output(graph, int(k)),
                                    replayer.output_elements(int(k)), replayed[k].data.size()));
    std::vector<const float*> in_ptrs;
    for (const HostTensor& t : inputs) in_ptrs.push_back(t.data.data());
    std::vector<float*> out_ptrs;
    for (HostTensor& t : replayed) out_ptrs.push_back(t.data.data());
    replayer.run_host(in_ptrs, out_ptrs, nullptr);

    EngineOptions options;
    options.precision = precision_from_string(info.precision);
    options.layout = tensor_layout_from_string(info.layout);
    // The replay's own kernels: only the schedule differs, and no convolution is timed again
    // (timing densenet121's 182 afresh made --validate take 91 s on the H100 instead of ~2 s).
    options.conv_choices = conv_choices_from_json(
        nlohmann::json::parse(replayer.conv_choices_json()), "the replay's convolution choices");
    return compare_with_sequential(graph, replayed, sequential_outputs(graph, inputs, options),
                                   options.precision);
}

}  // namespace iostune
