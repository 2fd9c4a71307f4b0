// Which stored schedule a replay runs: the best measured one for (graph fingerprint, this GPU,
// batch, precision), or, when the caller allows it, the sequential schedule with the reason.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "db/records.h"
#include "db/schedule_store.h"

namespace iostune {

struct ScheduleQuery {
    std::string model_name;
    std::string fingerprint;
    int batch = 1;
    std::string precision;
    // How `iostune search` names this model in the hints ("--model a --model b --shared-input"
    // for a model set); empty: "--model <model_name>".
    std::string model_args;
};

struct ScheduleChoice {
    std::optional<db::ScheduleRecord> schedule;  // empty: run the sequential schedule
    std::optional<db::DeviceRecord> device;      // the row the schedule was tuned on
    std::string fallback_reason;                 // set when `schedule` is empty
};

// The keys are checked first, so a missing schedule is reported without touching the GPU;
// `this_device` is only called once there is something to compare it with. Throws
// iostune::Error naming what the store holds when nothing may run, unless
// `fallback_sequential`, which turns every refusal into an empty choice with the reason.
ScheduleChoice select_schedule(const db::ScheduleStore& store, const ScheduleQuery& query,
                               const std::function<db::DeviceRecord()>& this_device,
                               bool fallback_sequential);

// Exactly schedule `id` (e.g. to replay one strategy's result, not the key's best): refused,
// like the best one, when it belongs to another graph, batch, precision or device setup, or
// was never measured on a GPU; then the sequential schedule only under `fallback_sequential`.
// Its refusals point to `iostune report` for the ids the store holds, not to that fallback.
ScheduleChoice select_schedule_by_id(const db::ScheduleStore& store, std::int64_t id,
                                     const ScheduleQuery& query,
                                     const std::function<db::DeviceRecord()>& this_device,
                                     bool fallback_sequential);

}  // namespace iostune
