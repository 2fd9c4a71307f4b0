#include "replay/schedule_selection.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "replay/device_match.h"
#include "src/error.h"

namespace iostune {

namespace {

std::string search_model_args(const ScheduleQuery& q) {
    return q.model_args.empty() ? fmt::format("--model {}", q.model_name) : q.model_args;
}


// The way out offered with a refusal: when no schedule fits the key, the sequential schedule;
// when one schedule was asked for by id, another id (running the sequential schedule is not
// what that user asked for).
enum class Hint { FallbackSequential, OtherScheduleId };

ScheduleChoice refuse(const db::ScheduleStore& store, const std::string& reason, Hint hint,
                      bool fallback_sequential) {
    if (!fallback_sequential) {
        if (hint == Hint::FallbackSequential)
            throw Error(reason +
                            "\nOr pass --fallback-sequential (ReplayOptions::fallback_sequential) "
                            "to run the sequential schedule instead.",
                        ErrorKind::MissingSchedule);
        throw Error(fmt::format(
            "{}\nRun `iostune report --db {}` to list the schedule ids it holds (model, batch, "
            "precision, device of each), or drop --schedule-id (ReplayOptions::schedule_id) to "
            "replay the best schedule for the model, batch and precision.",
            reason, store.path()), ErrorKind::MissingSchedule);
    }
    ScheduleChoice choice;
    choice.fallback_reason = reason;
    return choice;
}

// Why no key matches: most specific first.
std::string missing_key_reason(const db::ScheduleStore& store, const ScheduleQuery& q,
                               const std::vector<db::ScheduleKey>& keys) {
    std::string hint;
    for (const db::ScheduleKey& key : keys) {
        if (key.fingerprint == q.fingerprint && key.batch == q.batch &&
            key.precision == q.precision && key.measured == 0) {
            hint =
                "Its schedules there were searched with the simulated cost model (estimates); "
                "only schedules measured on a GPU can be replayed. ";
            break;
        }
        if (key.model_name == q.model_name && key.fingerprint != q.fingerprint) {
            hint = fmt::format(
                "The stored schedules of '{}' were searched for graph fingerprint {}, "
                "this graph's is {}: the model changed since it was tuned. ",
                q.model_name, key.fingerprint, q.fingerprint);
        }
    }
    return fmt::format(
        "No measured schedule in '{}' for model '{}' (fingerprint {}) at batch {}, "
        "precision {}. {}The database has:\n{}\nRun `iostune search {} "
        "--batch {} --precision {}` on this GPU first.",
        store.path(), q.model_name, q.fingerprint, q.batch, q.precision, hint,
        db::describe_keys(keys), search_model_args(q), q.batch, q.precision);
}

}  // namespace

ScheduleChoice select_schedule(const db::ScheduleStore& store, const ScheduleQuery& query,
                               const std::function<db::DeviceRecord()>& this_device,
                               bool fallback_sequential) {
    const std::vector<db::ScheduleKey> keys = store.list_keys();
    std::vector<db::ScheduleKey> matching;
    for (const db::ScheduleKey& key : keys) {
        if (key.fingerprint == query.fingerprint && key.batch == query.batch &&
            key.precision == query.precision && key.measured > 0)
            matching.push_back(key);
    }
    if (matching.empty())
        return refuse(store, missing_key_reason(store, query, keys), Hint::FallbackSequential,
                      fallback_sequential);

    const db::DeviceRecord here = this_device();
    ScheduleChoice best;
    std::vector<std::string> refused;
    for (const db::ScheduleKey& key : matching) {
        const std::optional<db::DeviceRecord> device = store.device(key.device_id);
        if (!device) continue;  // foreign keys make this impossible; nothing to compare
        if (const std::string why = device_mismatch(*device, here); !why.empty()) {
            refused.push_back(fmt::format("  tuned on {}: {}", describe_device(*device), why));
            continue;
        }
        std::optional<db::ScheduleRecord> record =
            store.best_schedule(query.fingerprint, key.device_id, query.batch, query.precision);
        if (record && (!best.schedule || *record->measured_ms < *best.schedule->measured_ms)) {
            best.schedule = std::move(record);
            best.device = device;
        }
    }
    if (best.schedule) return best;
    return refuse(
        store,
        fmt::format("The schedules in '{}' for model '{}' (fingerprint {}) at batch {}, "
                    "precision {} were tuned on another device setup, so their timing "
                    "does not hold on this one ({}):\n{}\nRun `iostune search {} "
                    "--batch {} --precision {}` on this GPU.",
                    store.path(), query.model_name, query.fingerprint, query.batch, query.precision,
                    describe_device(here), fmt::format("{}", fmt::join(refused, "\n")),
                    search_model_args(query), query.batch, query.precision),
        Hint::FallbackSequential, fallback_sequential);
}

ScheduleChoice select_schedule_by_id(const db::ScheduleStore& store, std::int64_t id,
                                     const ScheduleQuery& query,
                                     const std::function<db::DeviceRecord()>& this_device,
                                     bool fallback_sequential) {
    std::optional<db::ScheduleRecord> record = store.schedule(id);
    if (!record)
        return refuse(store, fmt::format("Schedule #{} is not in '{}'.", id, store.path()),
                      Hint::OtherScheduleId, fallback_sequential);
    const std::optional<db::ModelRecord> model = store.model(record->model_id);
    std::string mismatch;
    if (!model || model->fingerprint != query.fingerprint)
        mismatch = fmt::format("it was searched for model '{}' (fingerprint {}), not '{}' ({})",
                               model ? model->name : "?", model ? model->fingerprint : "?",
                               query.model_name, query.fingerprint);
    else if (record->batch != query.batch)
        mismatch = fmt::format("it was searched for batch {}, not {}", record->batch, query.batch);
    else if (record->precision != query.precision)
        mismatch = fmt::format("it was searched with precision {}, not {}", record->precision,
                               query.precision);
    else if (!record->measured_ms)
        mismatch = "it was searched with the simulated cost model and never measured on a GPU";
    if (!mismatch.empty())
        return refuse(store,
                      fmt::format("Schedule #{} in '{}' cannot be replayed here: {}.", id,
                                  store.path(), mismatch),
                      Hint::OtherScheduleId, fallback_sequential);
    const std::optional<db::DeviceRecord> device = store.device(record->device_id);
    const db::DeviceRecord here = this_device();
    if (device) {
        if (const std::string why = device_mismatch(*device, here); !why.empty())
            return refuse(store,
                          fmt::format("Schedule #{} in '{}' was tuned on {}, and its timing does "
                                      "not hold on {}: {}",
                                      id, store.path(), describe_device(*device),
                                      describe_device(here), why),
                          Hint::OtherScheduleId, fallback_sequential);
    }
    ScheduleChoice choice;
    choice.schedule = std::move(record);
    choice.device = device;
    return choice;
}

}  // namespace iostune
