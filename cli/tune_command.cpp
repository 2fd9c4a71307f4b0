// `iostune tune --plan PLAN.json`: every key of a tuning plan (tuning/tuning_plan.h), each
// searched by `iostune search` in a child process (tuning/fleet_run.h), on one GPU or one
// worker per GPU (--devices); or, with --emit-slurm DIR, the plan as a Slurm array
// (tuning/slurm_array.h). docs/fleet.md has the whole story.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/positive_number.h"
#include "db/schedule_store.h"
#include "src/error.h"
#include "tuning/fleet_run.h"
#include "tuning/slurm_array.h"
#include "tuning/tuning_plan.h"

namespace iostune::cli {

namespace {

struct TuneOptions {
    std::string plan;
    std::string db = db::kDefaultDatabasePath;
    std::vector<std::string> devices;
    double timeout_s = -1;  // < 0: the plan's
    bool force = false;
    std::string log_dir;
    int chunk = -1;  // < 0: every key
    int chunk_size = 1;
    std::string emit_slurm;
    std::string gres = "gpu:1";
    std::vector<std::string> sbatch_args;
};

// This very executable: the children run its `search`, the Slurm tasks its `tune`.
std::string own_executable() {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw Error(fmt::format("cannot find the iostune executable's path (/proc/self/exe: {}); "
                                "iostune tune needs Linux's /proc",
                                ec.message()));
    return self.string();
}

// Each distinct set of search options parsed as `iostune search` parses them, before any key
// runs: a misspelt option stops the plan with one message instead of failing every key.
void check_plan_searches(const TuningPlan& plan, const FleetOptions& fleet) {
    std::set<std::vector<std::string>> checked;
    for (const PlanKey& key : plan.keys) {
        if (!checked.insert(key.search_args).second) continue;
        std::vector<std::string> args = search_command(key, fleet);
        args.erase(args.begin());  // the executable
        try {
            check_search_arguments(args);
        } catch (const CLI::ParseError& e) {
            throw Error(fmt::format("tuning plan '{}': the search options of '{}' are not what "
                                    "`iostune search` takes: {} (the words: {})",
                                    plan.path, key.label(), e.what(),
                                    fmt::join(key.search_args, " ")));
        }
    }
}

std::string cell(const std::optional<double>& value, const char* spec, bool estimate = false) {
    if (!value) return "-";
    return fmt::format(fmt::runtime(spec), *value) + (estimate ? " (est)" : "");
}

std::vector<std::string> row_cells(const KeyOutcome& k) {
    return {k.key.label(),
            k.device.empty() ? "-" : k.device,
            to_string(k.status),
            k.strategy.empty() ? "-" : k.strategy,
            cell(k.latency_ms, "{:.4f}", k.estimate),
            cell(k.speedup, "{:.2f}x", k.estimate),
            cell(k.search_seconds, "{:.2f}"),
            fmt::format("{:.1f}", k.wall_seconds),
            k.message};
}

void print_progress(const KeyOutcome& k, std::size_t finished, std::size_t total) {
    const std::string where = k.device.empty() ? "" : fmt::format(" on GPU {}", k.device);
    const std::string head = fmt::format("[{}/{}] {}{}: {}", finished, total, k.key.label(), where,
                                         to_string(k.status));
    if (k.status == KeyStatus::Failed || k.status == KeyStatus::TimedOut)
        fmt::print("{}: {} (log: {})\n", head, k.message, k.log_path);
    else
        fmt::print("{}, {} {} ms, {} vs sequential{}, search {} s, wall {:.1f} s\n", head,
                   k.strategy, cell(k.latency_ms, "{:.4f}"), cell(k.speedup, "{:.2f}x"),
                   k.estimate ? " (simulated: estimates)" : "", cell(k.search_seconds, "{:.2f}"),
                   k.wall_seconds);
    std::fflush(stdout);
}

void print_table(const FleetReport& report) {
    const std::vector<std::string> headers = {"key", "gpu", "status", "strategy", "latency ms",
                                              "speedup", "search s", "wall s", "why"};
    std::vector<std::vector<std::string>> rows;
    for (const KeyOutcome& k : report.keys) rows.push_back(row_cells(k));
    std::vector<std::size_t> widths(headers.size());
    for (std::size_t c = 0; c < headers.size(); ++c) {
        widths[c] = headers[c].size();
        for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
    }
    auto line = [&](const std::vector<std::string>& fields) {
        std::string text;
        for (std::size_t c = 0; c < fields.size(); ++c)
            text += fmt::format("{:<{}}  ", fields[c], c + 1 == fields.size() ? 0 : widths[c]);
        while (!text.empty() && text.back() == ' ') text.pop_back();
        return text;
    };
    fmt::print("\n{}\n", line(headers));
    std::vector<std::string> rule;
    for (std::size_t w : widths) rule.push_back(std::string(w, '-'));
    fmt::print("{}\n", line(rule));
    for (const auto& row : rows) fmt::print("{}\n", line(row));
    fmt::print("{} keys: {} tuned, {} stored before, {} failed, {} timed out; wall {:.1f} s; "
               "logs in {}\n",
               report.keys.size(), report.count(KeyStatus::Tuned), report.count(KeyStatus::Stored),
               report.count(KeyStatus::Failed), report.count(KeyStatus::TimedOut),
               report.wall_seconds, report.log_dir);
    if (std::any_of(report.keys.begin(), report.keys.end(),
                    [](const KeyOutcome& k) { return k.estimate; }))
        fmt::print("(est): simulated cost model, an estimate, not a measurement\n");
}

// `--devices all`: every GPU this process may use. Under CUDA_VISIBLE_DEVICES (Slurm's, or set by
// hand) its entries, as they are: a worker's CUDA_VISIBLE_DEVICES=0 would name the host's first
// GPU, not the first one this process was given. Else an index per GPU the driver counts.
std::vector<std::string> visible_gpus() {
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
        std::vector<std::string> ids;
        std::string id;
        for (const char c : std::string(visible) + ",") {
            if (c != ',') {
                if (c != ' ') id += c;
            } else if (!id.empty()) {
                ids.push_back(std::exchange(id, ""));
            }
        }
        if (ids.empty())
            throw Error("--devices all: CUDA_VISIBLE_DEVICES is set but names no GPU; unset it, "
                        "or give the GPUs (--devices 0,1)");
        return ids;
    }
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0)
        throw Error(fmt::format("--devices all: this machine shows no usable GPU ({}); give the "
                                "GPUs (--devices 0,1), or tune without --devices",
                                status != cudaSuccess ? cudaGetErrorString(status)
                                                      : "0 CUDA devices"));
    std::vector<std::string> ids;
    for (int i = 0; i < count; ++i) ids.push_back(std::to_string(i));
    return ids;
}

std::vector<std::string> worker_devices(const std::vector<std::string>& devices) {
    if (std::find(devices.begin(), devices.end(), "all") == devices.end()) return devices;
    if (devices.size() > 1)
        throw Error(fmt::format("--devices {}: 'all' stands alone (every GPU this process may "
                                "use), or list the GPUs",
                                fmt::join(devices, ",")));
    return visible_gpus();
}

FleetOptions fleet_options(const TuneOptions& o) {
    FleetOptions fleet;
    fleet.db_path = o.db;
    fleet.iostune_exe = own_executable();
    fleet.devices = worker_devices(o.devices);
    fleet.log_dir = o.log_dir;
    fleet.force = o.force;
    if (o.timeout_s >= 0) fleet.timeout_s = o.timeout_s;
    if (o.chunk >= 0) fleet.chunk = KeyChunk{o.chunk, o.chunk_size};
    return fleet;
}

void emit_slurm(const TuningPlan& plan, const TuneOptions& o) {
    SlurmOptions slurm;
    slurm.dir = o.emit_slurm;
    slurm.iostune_exe = own_executable();
    slurm.chunk_size = o.chunk_size;
    slurm.gres = o.gres;
    slurm.sbatch_args = o.sbatch_args;
    if (o.timeout_s >= 0) slurm.timeout_s = o.timeout_s;
    const SlurmArray array = emit_slurm_array(plan, slurm);
    fmt::print("{} keys in {} array task{} written to {}:\n  {}  (the array; sbatch it alone, "
               "or)\n  {}  (queues it, then the merge)\n  {}  (merges the parts into {})\n",
               array.keys, array.tasks, array.tasks == 1 ? "" : "s", array.dir,
               array.tune_script, array.submit_script, array.merge_script, array.merged_db);
}

void run_tune(const TuneOptions& o) {
    const TuningPlan plan = load_tuning_plan(o.plan);
    const FleetOptions fleet = fleet_options(o);
    check_plan_searches(plan, fleet);
    if (!o.emit_slurm.empty()) {
        emit_slurm(plan, o);
        return;
    }
    // A file that is no schedule DB stops the plan here, once, rather than failing every key.
    std::error_code ec;
    if (std::filesystem::file_size(o.db, ec) > 0 && !ec)
        db::ScheduleStore::open(o.db, db::OpenMode::MustExist);
    const std::size_t keys = fleet.chunk ? chunk_keys(plan, *fleet.chunk).size() : plan.keys.size();
    fmt::print("tuning {} key{} of {} into {}, {}\n", keys, keys == 1 ? "" : "s", plan.path, o.db,
               fleet.devices.empty()
                       ? std::string("one at a time")
                       : fmt::format("a worker on each of GPUs {}", fmt::join(fleet.devices, ",")));
    std::fflush(stdout);
    const FleetReport report = run_fleet(plan, fleet, print_progress);
    print_table(report);
    if (!report.all_succeeded())
        throw Error(fmt::format("{} of {} keys did not finish (failed or timed out: see the table "
                                "above and their logs); the others are stored in {}. Fix or drop "
                                "them and run the same command again: it skips the stored keys",
                                report.count(KeyStatus::Failed) + report.count(KeyStatus::TimedOut),
                                report.keys.size(), o.db));
}

}  // namespace

void add_tune_command(CLI::App& app) {
    auto o = std::make_shared<TuneOptions>();
    CLI::App* cmd = app.add_subcommand(
        "tune", "Tune every key of a plan (docs/fleet.md): on this GPU, one worker per GPU, or "
                "as a Slurm array");
    cmd->add_option("--plan", o->plan, "the tuning plan (JSON; docs/fleet.md)")->required();
    auto* db = cmd->add_option("--db", o->db, "schedule database (created if missing)")
                   ->capture_default_str();
    auto* devices = cmd->add_option("--devices", o->devices,
                                    "one worker per GPU, pinned with CUDA_VISIBLE_DEVICES: "
                                    "comma-separated indices (or UUIDs), or all (those "
                                    "CUDA_VISIBLE_DEVICES lists, else every GPU)")
                        ->delimiter(',');
    cmd->add_option("--timeout", o->timeout_s,
                    "seconds each key may take (0: no limit), instead of the plan's timeout_s")
        ->check(number_from_zero());
    auto* force = cmd->add_flag("--force", o->force,
                                "search every key again, also those the database holds");
    auto* log_dir = cmd->add_option("--log-dir", o->log_dir,
                                    "each key's search output (default: the database path + .logs)");
    auto* chunk = cmd->add_option("--chunk", o->chunk,
                                  "only chunk N (from 0) of the plan's keys cut into --chunk-size "
                                  "runs (what a Slurm array task runs)")
                      ->check(whole_number_from_zero());
    cmd->add_option("--chunk-size", o->chunk_size, "keys per chunk (and per Slurm array task)")
        ->check(positive_whole_number())
        ->capture_default_str();
    auto* emit = cmd->add_option("--emit-slurm", o->emit_slurm,
                                 "write a Slurm array for the plan into this folder instead of "
                                 "tuning (tune.sbatch, submit.sh, merge.sh)");
    cmd->add_option("--slurm-gres", o->gres,
                    "with --emit-slurm: each task's --gres, or none for a cluster without GPU gres")
        ->needs(emit)
        ->capture_default_str();
    cmd->add_option("--sbatch-arg", o->sbatch_args,
                    "with --emit-slurm: one more #SBATCH option, e.g. --partition=gpu (repeat it)")
        ->needs(emit);
    emit->excludes(db)->excludes(devices)->excludes(force)->excludes(log_dir)->excludes(chunk);
    cmd->callback([o] { run_tune(*o); });
}

}  // namespace iostune::cli
