// `iostune tune --plan`: every key of a tuning plan searched by `iostune search` (so a search
// gains what the tuning job gains, and takes every option it has), one child process per key.
//
// Why a process per key, not a call of run_tuning_job in this process: a key can crash (a CUDA
// error leaves its context unusable for the rest of the process), hang inside a driver or cuDNN
// call (no thread can be stopped there), or leak GPU memory; a child is killed at its timeout
// and reaped, and the next key starts clean. A key's search takes seconds to minutes; starting
// a process costs well under one.
//
// Workers: one without --devices (the environment as it is, so Slurm's CUDA_VISIBLE_DEVICES
// holds), else one per listed GPU, each running one key at a time pinned to its GPU with
// CUDA_VISIBLE_DEVICES, and taking the next key when it is done. A key runs on one GPU only, so
// its stage measurements are all of one GPU. All write the one DB (WAL, busy timeout, BEGIN
// IMMEDIATE: db/schedule_store.h).
//
// A key whose search is stored already for the GPU that would run it is skipped (`search
// --skip-stored`), so a rerun after a failure or a kill resumes; a search killed mid-way also
// resumes its stage measurements. A key that fails (import error, NaN output, timeout, crash)
// is reported and the others go on.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuning/tuning_plan.h"

namespace iostune {

struct FleetOptions {
    std::string db_path;
    std::string iostune_exe;  // the `iostune` whose `search` runs each key
    // CUDA_VISIBLE_DEVICES of each worker; empty: one worker, the environment as it is.
    std::vector<std::string> devices;
    std::string log_dir;  // each key's search output; "": db_path + ".logs"
    bool force = false;   // search keys the DB holds already
    std::optional<double> timeout_s;  // every key's limit, instead of the plan's
    std::optional<KeyChunk> chunk;    // only this chunk of the plan's keys
    double poll_interval_s = 0.02;
};

enum class KeyStatus { Tuned, Stored, Failed, TimedOut };
const char* to_string(KeyStatus status);  // "tuned", "stored", "failed", "timeout"

struct KeyOutcome {
    std::size_t index = 0;  // the key's position in the plan
    PlanKey key;
    std::string device;  // the worker's CUDA_VISIBLE_DEVICES; "" without --devices
    KeyStatus status = KeyStatus::Failed;
    std::string message;   // why it failed or timed out; "" otherwise
    std::string strategy;  // the strategy of the schedule replay will use
    std::optional<double> latency_ms;  // measured end to end, or predicted when `estimate`
    std::optional<double> speedup;     // over the sequential schedule
    bool estimate = false;             // simulated cost model: latency and speedup are estimates
    std::optional<double> search_seconds;
    double wall_seconds = 0;  // the child's, start to exit
    std::string log_path;     // the search's standard error
};

struct FleetReport {
    std::vector<KeyOutcome> keys;  // in plan order
    double wall_seconds = 0;
    std::string log_dir;

    int count(KeyStatus status) const;
    bool all_succeeded() const;  // every key tuned or stored
};

using KeyProgress = std::function<void(const KeyOutcome& done, std::size_t finished,
                                       std::size_t total)>;

// Throws iostune::Error only for what stops every key: a duplicated device, a log folder that
// cannot be made, an `iostune` that cannot be run, a chunk the plan lacks.
FleetReport run_fleet(const TuningPlan& plan, const FleetOptions& options,
                      const KeyProgress& progress);

// The `iostune search` command line of one key, as run_fleet runs it (its argv[0] the exe).
std::vector<std::string> search_command(const PlanKey& key, const FleetOptions& options);

}  // namespace iostune
