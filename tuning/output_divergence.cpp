#include "tuning/output_divergence.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "src/error.h"
#include "src/output_agreement.h"
#include "src/reference/reference.h"
#include "src/stream_program.h"

namespace iostune {

namespace {

// The first op, in the graph's order, whose output differs beyond the tolerance, and how many do.
struct FirstDifference {
    std::optional<int> op;
    OutputAgreement agreement;
    int count = 0;
};
FirstDifference first_difference(const std::vector<HostTensor>& outputs,
                                 const std::vector<HostTensor>& reference, Precision precision) {
    FirstDifference d;
    for (size_t id = 0; id < outputs.size(); ++id) {
        const OutputAgreement a = output_agreement(outputs[id], reference[id], precision);
        if (a.agrees()) continue;
        ++d.count;
        if (!d.op) d.op = int(id), d.agreement = a;
    }
    return d;
}

// "(max |difference| 4.56, tolerance 0.0912; 21 of 81 ops differ)"
std::string extent(const FirstDifference& d, const Graph& graph) {
    return fmt::format("(max |difference| {:.3g}, tolerance {:.3g}; {} of {} ops differ)",
                       d.agreement.max_abs_diff, d.agreement.tolerance, d.count, graph.size());
}

// Its path and kernels, and how they were chosen (cut: the timed list can run long).
std::string describe_plan(const OpPlan& plan) {
    constexpr size_t kShown = 400;
    const std::string how = plan.candidates.size() > kShown
                                ? plan.candidates.substr(0, kShown) + "..."
                                : plan.candidates;
    return fmt::format("{} [{}] (chosen: {})", plan.path, plan.algorithms, how);
}

std::string first_divergent_op(Engine& engine, const Schedule& failing,
                               const Schedule& sequential) {
    const Graph& graph = engine.graph();
    const OpSnapshot reference = snapshot_ops(engine, sequential);
    const OpSnapshot mine = snapshot_ops(engine, failing);
    const FirstDifference d =
        first_difference(mine.outputs, reference.outputs, engine.options().precision);
    if (!d.op)
        return "run one launch at a time, every op agrees with the sequential schedule's: the "
               "wrong result needs launches running at once (a race, or a kernel whose result "
               "depends on what runs beside it)";
    const Op& op = graph.op(*d.op);
    const StreamProgram program(graph, failing);
    const Launch& launch = program.launches().at(size_t(program.launch_of(op.id)));
    std::string merged;
    if (launch.merge) {
        for (const MergePlan& m : engine.merge_plans())
            if (m.ops == launch.ops) merged = fmt::format("; merged ({}): {}", m.path, m.algorithms);
    }
    return fmt::format(
        "run one launch at a time, op {} '{}' is the first to differ from the sequential "
        "schedule's {}; it runs in launch {} on lane {}{}; its plan here: {}; in the sequential "
        "schedule's: {}{}; its bindings here: {}; in the sequential schedule's: {}",
        op.id, op.name, extent(d, graph), program.launch_of(op.id), launch.lane,
        launch.merge ? ", merged" : "",
        describe_plan(mine.plans.at(size_t(op.id))),
        describe_plan(reference.plans.at(size_t(op.id))), merged,
        mine.bindings.at(size_t(op.id)), reference.bindings.at(size_t(op.id)));
}

// Which of two results of `op` on the same inputs (taken from `snapshot`) the CPU reference
// computes, if either: "the CPU reference agrees with now's values (max |difference| 2e-05),
// not the start's (4.56)".
std::string reference_verdict(const Graph& graph, const Op& op, const OpSnapshot& snapshot,
                              const HostTensor& then, const HostTensor& now, Precision precision) {
    std::vector<const HostTensor*> inputs;
    for (const int id : op.inputs) {
        if (is_graph_input(id)) return "the CPU reference is not run on a graph input's op";
        inputs.push_back(&snapshot.outputs.at(size_t(id)));
    }
    const HostTensor reference = reference_op(op, inputs, graph.params_of(op.id));
    const OutputAgreement a = output_agreement(then, reference, precision);
    const OutputAgreement b = output_agreement(now, reference, precision);
    const char* verdict = a.agrees() && b.agrees() ? "both the start's and now's values"
                          : a.agrees()             ? "the start's values, not now's"
                          : b.agrees()             ? "now's values, not the start's"
                                                   : "neither the start's values nor now's";
    return fmt::format("on the same inputs the CPU reference computes {} (max |difference| "
                       "{:.3g} from the start's, {:.3g} from now's, tolerance {:.3g})",
                       verdict, a.max_abs_diff, b.max_abs_diff, a.tolerance);
}

// Which op of the sequential schedule computes other values than at the start.
std::string changed_since_start(Engine& engine, const Schedule& sequential,
                                const OpSnapshot& at_start) {
    const OpSnapshot now = snapshot_ops(engine, sequential);
    const FirstDifference d =
        first_difference(now.outputs, at_start.outputs, engine.options().precision);
    if (!d.op)
        return "run one launch at a time, the sequential schedule computes every op as at the "
               "start";
    const Op& op = engine.graph().op(*d.op);
    const size_t id = size_t(op.id);
    const Precision precision = engine.options().precision;
    std::string verdict;
    try {
        verdict = reference_verdict(engine.graph(), op, now, at_start.outputs.at(id),
                                    now.outputs.at(id), precision);
    } catch (const std::exception& e) {
        verdict = fmt::format("the CPU reference failed: {}", e.what());
    }
    return fmt::format(
        "run one launch at a time, the sequential schedule's op {} '{}' is the first to compute "
        "other values than at the start {}; {}; its bindings now: {}; at the start: {}{}; its "
        "plan now: {}; at the start: {}",
        op.id, op.name, extent(d, engine.graph()), verdict, now.bindings.at(id),
        at_start.bindings.at(id),
        now.bindings.at(id) == at_start.bindings.at(id) ? " (the same)" : "",
        describe_plan(now.plans.at(id)), describe_plan(at_start.plans.at(id)));
}

}  // namespace

OpSnapshot snapshot_ops(Engine& engine, const Schedule& schedule, WorkspaceBefore workspaces,
                        bool with_bindings) {
    const Graph& graph = engine.graph();
    {  // a whole run first: the input converted, the lanes and merges set up
        const CudaGraphExec whole = engine.capture(schedule);
        whole.launch(engine.origin_stream());
        engine.synchronize();
    }
    OpSnapshot snapshot;
    snapshot.outputs.resize(size_t(graph.size()));
    const StreamProgram program(graph, schedule);
    // In the program's order (one its dependencies allow), each output read before a later
    // launch can reuse its memory.
    for (const Launch& launch : program.launches()) {
        const Stage stage = launch.merge ? Stage{StageStrategy::Merge, {launch.ops}}
                                         : Stage{StageStrategy::Concurrent, {{launch.ops.at(0)}}};
        if (workspaces == WorkspaceBefore::Zeros) engine.fill_workspaces(std::nullopt);
        if (workspaces == WorkspaceBefore::Seeded) engine.fill_workspaces(uint64_t(launch.ops[0]) + 1);
        engine.launch_stage(stage, engine.origin_stream());
        for (const int id : launch.ops) snapshot.outputs[size_t(id)] = engine.read_op_output(id);
    }
    snapshot.plans = engine.op_plans();
    if (with_bindings)
        for (const Op& op : graph.ops()) snapshot.bindings.push_back(engine.op_bindings(op.id));
    return snapshot;
}

std::string workspace_dependence(Engine& engine, const Schedule& schedule) {
    const OpSnapshot zeros = snapshot_ops(engine, schedule, WorkspaceBefore::Zeros, false);
    const OpSnapshot seeded = snapshot_ops(engine, schedule, WorkspaceBefore::Seeded, false);
    const FirstDifference d =
        first_difference(seeded.outputs, zeros.outputs, engine.options().precision);
    if (!d.op) return "";
    const Op& op = engine.graph().op(*d.op);
    return fmt::format(
        "op {} '{}' computes other values when its workspace held seeded values than when it "
        "held zeros before it ran {}; its plan: {}",
        op.id, op.name, extent(d, engine.graph()), describe_plan(seeded.plans.at(size_t(op.id))));
}

std::string diagnose_divergence(Engine& engine, const Schedule& failing,
                                const Schedule& sequential,
                                const std::function<std::string(const Schedule&)>& difference,
                                const OpSnapshot* sequential_at_start) {
    std::vector<std::string> findings;
    const auto attempt = [&](const char* what, const std::function<std::string()>& step) {
        try {
            findings.push_back(step());
        } catch (const std::exception& e) {
            findings.push_back(fmt::format("{}: the diagnosis failed: {}", what, e.what()));
        }
    };
    attempt("run whole again", [&] {
        const std::string again = difference(failing);
        return again.empty() ? std::string("run whole again, it agrees (the wrong result does "
                                           "not repeat)")
                             : "run whole again, it still computes " + again;
    });
    attempt("the sequential schedule", [&] {
        const std::string now = difference(sequential);
        return now.empty() ? std::string("the sequential schedule still computes the reference")
                           : "the sequential schedule now computes " + now +
                                 " (the engine's state changed since the reference was taken)";
    });
    if (sequential_at_start)
        attempt("since the start", [&] {
            return changed_since_start(engine, sequential, *sequential_at_start);
        });
    attempt("what the workspaces held", [&] {
        const std::string found = workspace_dependence(engine, failing);
        return found.empty() ? std::string("run one launch at a time, no op's output depends on "
                                           "what its workspace held before it ran")
                             : "run one launch at a time, " + found;
    });
    attempt("one launch at a time", [&] { return first_divergent_op(engine, failing, sequential); });
    std::string text = "diagnosis:";
    for (const std::string& f : findings) text += "\n  - " + f;
    return text;
}

}  // namespace iostune
