#include "db/merge_plan.h"

#include <fmt/format.h>

#include <map>

#include "src/error.h"

namespace iostune::db {

namespace {

// Where each identity was first seen: the base, or an earlier part.
template <typename Record>
using Seen = std::map<std::string, PartRow<Record>>;

// The stage measurement held for an identity, and its place in the plan (-1: the base's).
struct HeldStage {
    PartRow<StageRecord> held;
    long planned = -1;
};

bool same_content(const ScheduleRecord& a, const ScheduleRecord& b) {
    return a.predicted_ms == b.predicted_ms && a.measured_ms == b.measured_ms &&
           a.sequential_ms == b.sequential_ms && a.schedule == b.schedule &&
           a.search_stats == b.search_stats && a.conv_choices == b.conv_choices;
}

bool same_content(const StageRecord& a, const StageRecord& b) {
    return a.latency_ms == b.latency_ms && a.spread_ms == b.spread_ms && a.repeats == b.repeats &&
           a.ok == b.ok && a.error == b.error && a.simulated == b.simulated &&
           a.tool_version == b.tool_version;
}

std::string ms(const std::optional<double>& value) {
    return value ? fmt::format("{:.4f} ms", *value) : std::string("none");
}

[[noreturn]] void refuse(const StoreSnapshot& part, const StoreSnapshot& other,
                         const std::string& what) {
    throw Error(fmt::format(
        "'{}' conflicts with '{}': {}. Nothing was merged. Merge the two into separate "
        "databases, or leave out the part that was edited or written by another build.",
        part.path, other.path, what));
}

class Planner {
public:
    explicit Planner(const StoreSnapshot& base) { add(base, false); }

    void add_part(const StoreSnapshot& part) { add(part, true); }

    MergePlan take() { return std::move(plan_); }

private:
    void add(const StoreSnapshot& part, bool is_part) {
        for (const DeviceRecord& device : part.devices) add_device(part, device, is_part);
        for (const ModelRecord& model : part.models) add_model(part, model, is_part);
        for (const ScheduleRecord& schedule : part.schedules) add_schedule(part, schedule, is_part);
        for (const StageRecord& stage : part.stages) add_stage(part, stage, is_part);
    }

    void add_device(const StoreSnapshot& part, const DeviceRecord& device, bool is_part) {
        if (devices_.emplace(device_identity(device), PartRow<DeviceRecord>{&part, &device}).second &&
            is_part)
            plan_.devices.push_back({&part, &device});
    }

    void add_model(const StoreSnapshot& part, const ModelRecord& model, bool is_part) {
        const auto [seen, added] =
            models_.emplace(model.fingerprint, PartRow<ModelRecord>{&part, &model});
        if (added) {
            if (is_part) plan_.models.push_back({&part, &model});
            return;
        }
        if (seen->second.row->graph != model.graph)
            refuse(part, *seen->second.part,
                   fmt::format("model fingerprint {} ('{}' there, '{}' here) names two different "
                               "graphs",
                               model.fingerprint, seen->second.row->name, model.name));
    }

    void add_schedule(const StoreSnapshot& part, const ScheduleRecord& schedule, bool is_part) {
        const std::string identity = schedule_identity(part, schedule);
        const auto [seen, added] =
            schedules_.emplace(identity, PartRow<ScheduleRecord>{&part, &schedule});
        if (added) {
            if (is_part) plan_.schedules.push_back({&part, &schedule});
            return;
        }
        if (!same_content(*seen->second.row, schedule))
            refuse(part, *seen->second.part,
                   fmt::format("the {} schedule of '{}' (batch {}, {}) created {} by {} holds "
                               "different values in each (measured {} there, {} here)",
                               schedule.strategy, part.model(schedule.model_id).name,
                               schedule.batch, schedule.precision, schedule.created_at,
                               schedule.git_commit, ms(seen->second.row->measured_ms),
                               ms(schedule.measured_ms)));
        if (is_part) ++plan_.schedules_present;
    }

    void add_stage(const StoreSnapshot& part, const StageRecord& stage, bool is_part) {
        const auto [seen, added] =
            stages_.emplace(stage_identity(part, stage), HeldStage{{&part, &stage}});
        HeldStage& held = seen->second;
        if (added) {
            if (is_part) plan(held);
            return;
        }
        const StageRecord& row = *held.held.row;
        if (row.measured_at == stage.measured_at) {
            if (!same_content(row, stage))
                refuse(part, *held.held.part,
                       fmt::format("stage '{}' (batch {}, {}, {}) measured {} holds different "
                                   "values in each ({:.4f} ms there, {:.4f} ms here)",
                                   stage.stage_key, stage.batch, stage.precision, stage.layout,
                                   stage.measured_at, row.latency_ms, stage.latency_ms));
            ++plan_.stages_present;
            return;
        }
        if (row.measured_at > stage.measured_at) {  // ISO 8601 UTC: text order is time order
            ++plan_.stages_present;
            return;
        }
        // A newer measurement of a stage seen before replaces the held one; in the plan too,
        // when that one was itself planned from an earlier part.
        held.held = {&part, &stage};
        if (held.planned >= 0) {
            plan_.stages[static_cast<std::size_t>(held.planned)] = held.held;
            ++plan_.stages_present;  // the earlier part's measurement, superseded
        } else {
            plan(held);
            ++plan_.stages_replacing;
        }
    }

    void plan(HeldStage& held) {
        held.planned = static_cast<long>(plan_.stages.size());
        plan_.stages.push_back(held.held);
    }

    Seen<DeviceRecord> devices_;
    Seen<ModelRecord> models_;
    Seen<ScheduleRecord> schedules_;
    std::map<std::string, HeldStage> stages_;
    MergePlan plan_;
};

}  // namespace

MergePlan plan_merge(const StoreSnapshot& base, const std::vector<StoreSnapshot>& parts) {
    Planner planner(base);
    for (const StoreSnapshot& part : parts) planner.add_part(part);
    return planner.take();
}

}  // namespace iostune::db
