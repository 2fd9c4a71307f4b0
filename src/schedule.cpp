#include "src/schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>

#include "src/blocks.h"
#include "src/error.h"

namespace iostune {

std::vector<Stage> Schedule::flat_stages() const {
    std::vector<Stage> all;
    for (const auto& block : blocks) all.insert(all.end(), block.begin(), block.end());
    return all;
}

const char* to_string(StageStrategy strategy) {
    switch (strategy) {
        case StageStrategy::Concurrent: return "concurrent";
        case StageStrategy::Merge: return "merge";
    }
    return "unknown";
}

const char* to_string(ScheduleForm form) {
    return form == ScheduleForm::Dataflow ? "dataflow" : "staged";
}

int priority_of(const Schedule& schedule, int op) {
    return schedule.priorities.empty() ? 0 : schedule.priorities.at(size_t(op));
}

bool same_launches(const Schedule& a, const Schedule& b) {
    return a.blocks == b.blocks && a.form == b.form && a.barriers == b.barriers;
}

int prioritised_ops(const Schedule& schedule) {
    return int(std::count_if(schedule.priorities.begin(), schedule.priorities.end(),
                             [](int level) { return level > 0; }));
}

Schedule with_form(Schedule schedule, ScheduleForm form) {
    schedule.form = form;
    schedule.barriers.clear();
    return schedule;
}

namespace {

bool refuse(std::string* why, std::string reason) {
    if (why) *why = std::move(reason);
    return false;
}

// Offset of the kernel centre from the padded window's start: equal offsets mean the outputs of
// the kernels zero-padded to the largest one line up pixel for pixel.
int centre_offset(int kernel, int pad) { return (kernel - 1) / 2 - pad; }

// The shape a batched SepConv merge needs its members to share (kernel sizes may differ).
std::string sepconv_shape_key(const Graph& graph, const Op& op) {
    const auto& a = op.as<SepConvAttrs>();
    const Shape& in = graph.tensor_shape(op.inputs.at(0));
    const Shape& out = op.output;
    // A ReLU after is a suffix, so that the keys of ops without one read as before.
    return fmt::format("sep:{}x{}x{}x{}->{}x{}x{}x{}/s{}d{}r{}b{}{}", in.n, in.c, in.h, in.w, out.n,
                       out.c, out.h, out.w, a.stride, a.dilation, int(a.pre_relu), int(a.bias),
                       a.post_relu ? "o1" : "");
}

bool can_batch_sepconvs(const Graph& graph, const std::vector<int>& ops, std::string* why) {
    const Op& first = graph.op(ops.front());
    const std::string shape = sepconv_shape_key(graph, first);
    for (int id : ops)
        if (graph.op(id).kind != OpKind::SepConv)
            return refuse(why, fmt::format("op '{}' is a {}, '{}' a SepConv; a batched merge "
                                           "holds separable convolutions only",
                                           graph.op(id).name, to_string(graph.op(id).kind),
                                           first.name));
    for (int id : ops) {
        const Op& op = graph.op(id);
        if (sepconv_shape_key(graph, op) != shape)
            return refuse(why, fmt::format("op '{}' differs from '{}' in its input or output "
                                           "shape, stride, dilation, pre-ReLU, ReLU after or bias",
                                           op.name, first.name));
        // One launch computes every member at once: none may read another's output.
        for (int other : ops)
            if (op.inputs[0] == other)
                return refuse(why, fmt::format("op '{}' reads the output of '{}', merged with it",
                                               op.name, graph.op(other).name));
    }
    return true;
}

}  // namespace

MergeKind merge_kind(const Graph& graph, const std::vector<int>& ops) {
    return !ops.empty() && graph.op(ops.front()).kind == OpKind::SepConv ? MergeKind::Batched
                                                                          : MergeKind::Stacked;
}

std::optional<std::string> merge_key(const Graph& graph, int id) {
    const Op& op = graph.op(id);
    if (op.inputs.size() != 1) return std::nullopt;
    if (op.kind == OpKind::Conv) return fmt::format("conv:{}", op.inputs[0]);
    if (op.kind == OpKind::SepConv) return sepconv_shape_key(graph, op);
    return std::nullopt;
}

bool can_merge(const Graph& graph, const std::vector<int>& ops, std::string* why) {
    if (ops.size() < 2) return refuse(why, "a merge needs at least two convolutions");
    for (int id : ops)
        if (id < 0 || id >= graph.size())
            return refuse(why, fmt::format("op id {} is not in graph '{}' ({} ops)", id,
                                           graph.name(), graph.size()));
    std::vector<int> sorted = ops;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        return refuse(why, "an op appears twice in the merge");

    const Op& first = graph.op(ops.front());
    if (first.kind == OpKind::SepConv) return can_batch_sepconvs(graph, ops, why);
    for (int id : ops) {
        const Op& op = graph.op(id);
        if (op.kind != OpKind::Conv)
            return refuse(why, fmt::format("op '{}' is a {}, not a Conv", op.name, to_string(op.kind)));
        const auto& a = op.as<ConvAttrs>();
        // One wider convolution has one epilogue: it cannot add a different z to each slice.
        if (a.residual)
            return refuse(why, fmt::format("op '{}' is a residual convolution (a fused add); "
                                           "residual convolutions are not merged",
                                           op.name));
        if (op.inputs.size() != 1 || op.inputs[0] != first.inputs[0])
            return refuse(why, fmt::format("op '{}' does not read the same tensor as '{}'", op.name,
                                           first.name));
        if (a.groups != 1)
            return refuse(why, fmt::format("op '{}' is a grouped convolution", op.name));
        if (a.dilation_h != 1 || a.dilation_w != 1)
            return refuse(why, fmt::format("op '{}' is dilated", op.name));
        if (a.kernel_h % 2 == 0 || a.kernel_w % 2 == 0)
            return refuse(why, fmt::format("op '{}' has an even kernel {}x{}", op.name, a.kernel_h,
                                           a.kernel_w));
        if (&op == &first) continue;
        const auto& f = first.as<ConvAttrs>();
        if (a.stride_h != f.stride_h || a.stride_w != f.stride_w)
            return refuse(why, fmt::format("op '{}' has stride {}x{}, '{}' has {}x{}", op.name,
                                           a.stride_h, a.stride_w, first.name, f.stride_h,
                                           f.stride_w));
        // One epilogue for the merged output: the same bias, ReLU and activation in every slice
        // (PReLU slopes are per channel: they stack like the biases).
        if (a.bias != f.bias || a.relu != f.relu || a.activation != f.activation ||
            a.prelu != f.prelu)
            return refuse(why, fmt::format("op '{}' differs from '{}' in bias, ReLU, activation "
                                           "or PReLU",
                                           op.name, first.name));
        if (op.output.h != first.output.h || op.output.w != first.output.w)
            return refuse(why, fmt::format("op '{}' outputs {}x{}, '{}' outputs {}x{}", op.name,
                                           op.output.h, op.output.w, first.name, first.output.h,
                                           first.output.w));
        if (centre_offset(a.kernel_h, a.pad_h) != centre_offset(f.kernel_h, f.pad_h) ||
            centre_offset(a.kernel_w, a.pad_w) != centre_offset(f.kernel_w, f.pad_w))
            return refuse(why, fmt::format("the kernel centres of '{}' and '{}' do not line up "
                                           "(kernel/padding differ)",
                                           op.name, first.name));
    }
    return true;
}

namespace {

std::string stage_where(size_t block, size_t stage) {
    return fmt::format("block {} stage {}", block, stage);
}

void validate_merge(const Graph& graph, const Stage& stage, const std::string& where) {
    if (stage.groups.size() != 1)
        throw Error(fmt::format("schedule: {} is a merge stage with {} groups; a merge has exactly "
                                "one group",
                                where, stage.groups.size()));
    std::string why;
    if (!can_merge(graph, stage.groups[0], &why))
        throw Error(fmt::format("schedule: {} merges ops {} illegally: {}", where,
                                stage.groups[0], why));
}

}  // namespace

void validate(const Graph& graph, const Schedule& schedule) {
    const int n = graph.size();
    // Per op: the flat index of the stage that runs it (-1: not yet seen), its group, its place.
    std::vector<int> stage_of(size_t(n), -1), group_of(size_t(n), -1), pos_of(size_t(n), -1);
    int flat = 0;
    for (size_t b = 0; b < schedule.blocks.size(); ++b) {
        if (schedule.blocks[b].empty())
            throw Error(fmt::format("schedule: block {} has no stages", b));
        for (size_t s = 0; s < schedule.blocks[b].size(); ++s, ++flat) {
            const Stage& stage = schedule.blocks[b][s];
            const std::string where = stage_where(b, s);
            if (stage.groups.empty()) throw Error(fmt::format("schedule: {} is empty", where));
            for (size_t g = 0; g < stage.groups.size(); ++g) {
                if (stage.groups[g].empty())
                    throw Error(fmt::format("schedule: {} has an empty group {}", where, g));
                for (size_t i = 0; i < stage.groups[g].size(); ++i) {
                    const int id = stage.groups[g][i];
                    if (id < 0 || id >= n)
                        throw Error(fmt::format("schedule: {} names op {}, but graph '{}' has ops "
                                                "0..{}; was the schedule made for another model?",
                                                where, id, graph.name(), n - 1));
                    if (stage_of[size_t(id)] >= 0)
                        throw Error(fmt::format("schedule: op {} ('{}') is scheduled twice ({})",
                                                id, graph.op(id).name, where));
                    stage_of[size_t(id)] = flat;
                    group_of[size_t(id)] = int(g);
                    pos_of[size_t(id)] = int(i);
                }
            }
            // Dependencies, now that every op of this stage has its place.
            for (size_t g = 0; g < stage.groups.size(); ++g) {
                for (int id : stage.groups[g]) {
                    for (int src : graph.op(id).inputs) {
                        if (is_graph_input(src)) continue;
                        const int src_stage = stage_of[size_t(src)];
                        const auto& consumer = graph.op(id).name;
                        const auto& producer = graph.op(src).name;
                        if (src_stage >= 0 && src_stage < flat) continue;
                        if (src_stage == flat && group_of[size_t(src)] != int(g))
                            throw Error(fmt::format("schedule: {}: op '{}' reads op '{}' of another "
                                                    "group of the same stage; groups of a stage "
                                                    "must be independent",
                                                    where, consumer, producer));
                        if (src_stage == flat && pos_of[size_t(src)] < pos_of[size_t(id)]) continue;
                        throw Error(fmt::format("schedule: {}: op '{}' runs before its input '{}'",
                                                where, consumer, producer));
                    }
                }
            }
            if (stage.strategy == StageStrategy::Merge) validate_merge(graph, stage, where);
        }
    }
    for (int id = 0; id < n; ++id)
        if (stage_of[size_t(id)] < 0)
            throw Error(fmt::format("schedule: op {} ('{}') of graph '{}' is never scheduled", id,
                                    graph.op(id).name, graph.name()));
    if (!schedule.barriers.empty() && schedule.form != ScheduleForm::Dataflow)
        throw Error("schedule: barriers are for the dataflow form (a staged schedule has one "
                    "before every stage)");
    for (size_t i = 0; i < schedule.barriers.size(); ++i) {
        const int at = schedule.barriers[i];
        if (at <= 0 || at >= flat || (i > 0 && at <= schedule.barriers[i - 1]))
            throw Error(fmt::format("schedule: barrier {} is {}; barriers are ascending stage "
                                    "indices in 1..{}",
                                    i, at, flat - 1));
    }
    if (!schedule.priorities.empty() && schedule.priorities.size() != size_t(n))
        throw Error(fmt::format("schedule: {} priorities for graph '{}' of {} ops; give one level "
                                "per op, or none",
                                schedule.priorities.size(), graph.name(), n));
    for (size_t id = 0; id < schedule.priorities.size(); ++id)
        if (schedule.priorities[id] < 0 || schedule.priorities[id] > kMaxPriority)
            throw Error(fmt::format("schedule: op {} ('{}') has priority {}; levels are 0..{}",
                                    id, graph.op(int(id)).name, schedule.priorities[id],
                                    kMaxPriority));
}

Schedule sequential_schedule(const Graph& graph) {
    Schedule schedule;
    for (const Block& block : partition_blocks(graph)) {
        std::vector<Stage> stages;
        for (int id : block.ops) stages.push_back(Stage{StageStrategy::Concurrent, {{id}}});
        schedule.blocks.push_back(std::move(stages));
    }
    return schedule;
}

nlohmann::json schedule_to_json(const Schedule& schedule) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& block : schedule.blocks) {
        nlohmann::json stages = nlohmann::json::array();
        for (const Stage& stage : block)
            stages.push_back({{"strategy", to_string(stage.strategy)}, {"groups", stage.groups}});
        blocks.push_back({{"stages", std::move(stages)}});
    }
    nlohmann::json doc = {{"blocks", std::move(blocks)}};
    if (schedule.form == ScheduleForm::Dataflow) doc["form"] = to_string(schedule.form);
    if (!schedule.barriers.empty()) doc["barriers"] = schedule.barriers;
    if (!schedule.priorities.empty()) doc["priorities"] = schedule.priorities;
    return doc;
}

namespace {

const nlohmann::json& member(const nlohmann::json& obj, const char* key, const std::string& where) {
    if (!obj.is_object())
        throw Error(fmt::format("schedule JSON: {} must be an object", where));
    auto it = obj.find(key);
    if (it == obj.end())
        throw Error(fmt::format("schedule JSON: {} has no \"{}\"", where, key));
    return *it;
}

const nlohmann::json& array_at(const nlohmann::json& value, const std::string& where) {
    if (!value.is_array()) throw Error(fmt::format("schedule JSON: {} must be an array", where));
    return value;
}

StageStrategy strategy_from_json(const nlohmann::json& value, const std::string& where) {
    if (value == "concurrent") return StageStrategy::Concurrent;
    if (value == "merge") return StageStrategy::Merge;
    throw Error(fmt::format("schedule JSON: {} is {}; expected \"concurrent\" or \"merge\"", where,
                            value.dump()));
}

int op_id_from_json(const nlohmann::json& value, const std::string& where) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > INT_MAX)
        throw Error(fmt::format("schedule JSON: {} is {}; expected a non-negative op id", where,
                                value.dump()));
    return value.get<int>();
}

}  // namespace

Schedule schedule_from_json(const nlohmann::json& doc) {
    Schedule schedule;
    const auto& blocks = array_at(member(doc, "blocks", "the document"), "blocks");
    for (size_t b = 0; b < blocks.size(); ++b) {
        const std::string bw = fmt::format("blocks[{}]", b);
        const auto& stages = array_at(member(blocks[b], "stages", bw), bw + ".stages");
        std::vector<Stage> block;
        for (size_t s = 0; s < stages.size(); ++s) {
            const std::string sw = fmt::format("{}.stages[{}]", bw, s);
            Stage stage;
            stage.strategy = strategy_from_json(member(stages[s], "strategy", sw), sw + ".strategy");
            const auto& groups = array_at(member(stages[s], "groups", sw), sw + ".groups");
            for (size_t g = 0; g < groups.size(); ++g) {
                const std::string gw = fmt::format("{}.groups[{}]", sw, g);
                std::vector<int> group;
                for (size_t i = 0; i < array_at(groups[g], gw).size(); ++i)
                    group.push_back(op_id_from_json(groups[g][i], fmt::format("{}[{}]", gw, i)));
                stage.groups.push_back(std::move(group));
            }
            block.push_back(std::move(stage));
        }
        schedule.blocks.push_back(std::move(block));
    }
    if (const auto it = doc.find("form"); it != doc.end()) {
        if (*it == "dataflow") schedule.form = ScheduleForm::Dataflow;
        else if (*it != "staged")
            throw Error(fmt::format("schedule JSON: \"form\" is {}; expected \"staged\" or "
                                    "\"dataflow\"",
                                    it->dump()));
    }
    if (const auto it = doc.find("barriers"); it != doc.end())
        for (const nlohmann::json& at : array_at(*it, "barriers")) {
            if (!at.is_number_integer() || at.get<int64_t>() <= 0 || at.get<int64_t>() > INT_MAX)
                throw Error(fmt::format("schedule JSON: barriers holds {}; expected positive "
                                        "stage indices",
                                        at.dump()));
            schedule.barriers.push_back(at.get<int>());
        }
    if (const auto it = doc.find("priorities"); it != doc.end())
        for (const nlohmann::json& level : array_at(*it, "priorities")) {
            if (!level.is_number_integer() || level.get<int64_t>() < 0 ||
                level.get<int64_t>() > kMaxPriority)
                throw Error(fmt::format("schedule JSON: priorities holds {}; expected levels "
                                        "0..{}",
                                        level.dump(), kMaxPriority));
            schedule.priorities.push_back(level.get<int>());
        }
    return schedule;
}

std::string stage_signature(const Stage& stage) {
    std::string text = stage.strategy == StageStrategy::Merge ? "m:" : "c:";
    for (const auto& group : stage.groups) text += fmt::format("[{}]", fmt::join(group, ","));
    return text;
}

}  // namespace iostune
