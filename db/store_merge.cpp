#include "db/store_merge.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "db/merge_plan.h"
#include "db/store_rows.h"
#include "src/error.h"

namespace iostune::db {

namespace {

namespace fs = std::filesystem;

void check_not_target(const std::string& into, const std::string& part) {
    std::error_code ec;
    if (fs::exists(into, ec) && fs::equivalent(into, part, ec))
        throw Error(fmt::format("'{}' is both the merge target (--into) and a part; pass the "
                                "parts and a different target file",
                                part));
}

StoreSnapshot read_part(const std::string& into, const std::string& path) {
    check_not_target(into, path);
    try {
        return read_snapshot(path);
    } catch (const Error& e) {
        throw Error(fmt::format("part '{}' refused, nothing was merged into '{}': {}", path, into,
                                e.what()));
    }
}

// The target's ids of the parts' devices and models, inserting those it lacks.
class IdMap {
public:
    explicit IdMap(Connection& connection) : connection_(connection) {}

    std::int64_t device(const StoreSnapshot& part, std::int64_t part_id) {
        const DeviceRecord& device = part.device(part_id);
        const std::string identity = device_identity(device);
        if (const auto found = devices_.find(identity); found != devices_.end())
            return found->second;
        return devices_[identity] = insert_or_find_device(connection_, device);
    }

    std::int64_t model(const StoreSnapshot& part, std::int64_t part_id) {
        const ModelRecord& model = part.model(part_id);
        if (const auto found = models_.find(model.fingerprint); found != models_.end())
            return found->second;
        return models_[model.fingerprint] = insert_or_find_model(connection_, model);
    }

private:
    Connection& connection_;
    std::map<std::string, std::int64_t> devices_;
    std::map<std::string, std::int64_t> models_;
};

// A part's schedule as the part holds it (creation time and provenance included), its
// references mapped to the target's ids.
void copy_schedule(Connection& connection, IdMap& ids, const PartRow<ScheduleRecord>& planned) {
    ScheduleRecord row = *planned.row;
    row.model_id = ids.model(*planned.part, row.model_id);
    row.device_id = ids.device(*planned.part, row.device_id);
    insert_schedule(connection, row);
}

}  // namespace

MergeSummary ScheduleStore::merge_from(const std::vector<StoreSnapshot>& parts) {
    // The write lock first: the target read for the plan is then the one written to.
    Transaction transaction(*connection_);
    const MergePlan plan = plan_merge(read_snapshot(*this), parts);
    IdMap ids(*connection_);
    for (const auto& device : plan.devices) ids.device(*device.part, device.row->id);
    for (const auto& model : plan.models) ids.model(*model.part, model.row->id);
    for (const auto& schedule : plan.schedules) copy_schedule(*connection_, ids, schedule);
    StageWriter stages(*connection_);
    for (const auto& planned : plan.stages) {
        StageRecord row = *planned.row;  // its measurement time kept
        row.device_id = ids.device(*planned.part, row.device_id);
        stages.put(row);
    }
    transaction.commit();

    MergeSummary summary;
    summary.parts = static_cast<int>(parts.size());
    summary.devices_added = static_cast<int>(plan.devices.size());
    summary.models_added = static_cast<int>(plan.models.size());
    summary.schedules_added = static_cast<int>(plan.schedules.size());
    summary.schedules_present = plan.schedules_present;
    summary.stages_replaced = plan.stages_replacing;
    summary.stages_added = static_cast<int>(plan.stages.size()) - plan.stages_replacing;
    summary.stages_present = plan.stages_present;
    summary.keys = static_cast<int>(list_keys().size());
    return summary;
}

MergeSummary merge_stores(const std::string& into, const std::vector<std::string>& parts) {
    if (parts.empty())
        throw Error(fmt::format("no parts to merge into '{}'; pass one or more part databases",
                                into));
    std::vector<StoreSnapshot> snapshots;
    snapshots.reserve(parts.size());
    for (const std::string& part : parts) snapshots.push_back(read_part(into, part));
    // Conflicts between the parts themselves are refused before the target is even created.
    plan_merge(StoreSnapshot{}, snapshots);
    ScheduleStore target = ScheduleStore::open(into, OpenMode::CreateIfMissing);
    return target.merge_from(snapshots);
}

}  // namespace iostune::db
