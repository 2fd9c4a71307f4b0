#include "tuning/fleet_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "src/error.h"
#include "src/stopwatch.h"
#include "tuning/child_process.h"

namespace iostune {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// "003-inception_v3_b1_fp16": the key's position keeps two keys of one label apart.
std::string log_stem(std::size_t index, const PlanKey& key) {
    std::string label = key.label();
    for (char& c : label)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
    return fmt::format("{:03}-{}", index, label);
}

// What `search` said before it stopped: its "iostune: error: ..." line, else its last line.
std::string last_error_line(const std::string& stderr_text) {
    std::string last;
    std::size_t begin = 0;
    while (begin < stderr_text.size()) {
        std::size_t end = stderr_text.find('\n', begin);
        if (end == std::string::npos) end = stderr_text.size();
        const std::string line = stderr_text.substr(begin, end - begin);
        if (line.rfind("iostune: error: ", 0) == 0) return line.substr(16);
        if (line.rfind("iostune: ", 0) == 0) return line.substr(9);  // "internal error: ..."
        if (!line.empty()) last = line;
        begin = end + 1;
    }
    return last;
}

std::optional<double> number(const json& summary, const char* field) {
    const auto found = summary.find(field);
    if (found == summary.end() || !found->is_number()) return std::nullopt;
    return found->get<double>();
}

std::optional<double> ratio(std::optional<double> numerator, std::optional<double> denominator) {
    if (!numerator || !denominator || *denominator <= 0) return std::nullopt;
    return *numerator / *denominator;
}

// A finished search's JSON summary (cli/search_command.cpp): a new schedule, or the stored one.
void read_summary(const json& summary, KeyOutcome& outcome) {
    outcome.status = summary.value("skipped", false) ? KeyStatus::Stored : KeyStatus::Tuned;
    outcome.strategy = summary.value("kept_strategy", summary.value("strategy", std::string()));
    outcome.search_seconds = number(summary, "search_seconds");
    outcome.latency_ms = number(summary, "measured_latency_ms");
    if (outcome.latency_ms) {
        outcome.speedup = ratio(number(summary, "sequential_latency_ms"), outcome.latency_ms);
        return;
    }
    outcome.estimate = true;
    outcome.latency_ms = number(summary, "predicted_latency_ms");
    outcome.speedup =
        ratio(number(summary, "sequential_predicted_latency_ms"), outcome.latency_ms);
}

struct Running {
    ChildProcess child;
    KeyOutcome outcome;
    SteadyClock::time_point started;
    double limit_s = 0;
    bool timed_out = false;
    std::string stdout_path;
};

class Dispatcher {
public:
    Dispatcher(const TuningPlan& plan, const FleetOptions& options, const KeyProgress& progress)
        : plan_(plan), options_(options), progress_(progress) {
        log_dir_ = options.log_dir.empty() ? options.db_path + ".logs" : options.log_dir;
        std::error_code ec;
        fs::create_directories(log_dir_, ec);
        if (ec)
            throw Error(fmt::format("cannot create the log folder '{}': {}; pass --log-dir",
                                    log_dir_, ec.message()));
        workers_.resize(std::max<std::size_t>(1, options.devices.size()));
    }

    FleetReport run(const std::vector<std::size_t>& positions) {
        const auto begin = SteadyClock::now();
        std::deque<std::size_t> pending(positions.begin(), positions.end());
        total_ = positions.size();
        while (true) {
            for (std::size_t w = 0; w < workers_.size() && !pending.empty(); ++w) {
                if (workers_[w]) continue;
                start(w, pending.front());
                pending.pop_front();
            }
            if (std::none_of(workers_.begin(), workers_.end(),
                             [](const auto& worker) { return worker.has_value(); }))
                break;
            if (!check_workers())
                std::this_thread::sleep_for(std::chrono::duration<double>(options_.poll_interval_s));
        }
        FleetReport report;
        report.keys = std::move(finished_);
        std::sort(report.keys.begin(), report.keys.end(),
                  [](const KeyOutcome& a, const KeyOutcome& b) { return a.index < b.index; });
        report.wall_seconds = seconds_since(begin);
        report.log_dir = log_dir_;
        return report;
    }

private:
    void start(std::size_t worker, std::size_t position) {
        const PlanKey& key = plan_.keys[position];
        const std::string stem = (fs::path(log_dir_) / log_stem(position, key)).string();
        KeyOutcome outcome;
        outcome.index = position;
        outcome.key = key;
        outcome.device = options_.devices.empty() ? "" : options_.devices[worker];
        outcome.log_path = stem + ".log";
        ChildSpec spec{search_command(key, options_), {}, stem + ".json", outcome.log_path};
        if (!outcome.device.empty()) spec.env.push_back({"CUDA_VISIBLE_DEVICES", outcome.device});
        workers_[worker].emplace(Running{ChildProcess(spec), std::move(outcome),
                                         SteadyClock::now(),
                                         options_.timeout_s.value_or(key.timeout_s), false,
                                         spec.stdout_path});
    }

    // Reaps the children that ended and kills those past their limit; true if any ended.
    bool check_workers() {
        bool any = false;
        for (auto& worker : workers_) {
            if (!worker) continue;
            if (const auto status = worker->child.poll()) {
                finish(*worker, *status);
                worker.reset();
                any = true;
            } else if (worker->limit_s > 0 && seconds_since(worker->started) > worker->limit_s) {
                worker->timed_out = true;
                worker->child.kill();
            }
        }
        return any;
    }

    void finish(Running& run, const ExitStatus& status) {
        KeyOutcome& outcome = run.outcome;
        outcome.wall_seconds = seconds_since(run.started);
        if (run.timed_out) {
            outcome.status = KeyStatus::TimedOut;
            outcome.message = fmt::format("no result within {:g} s; the search was killed (its "
                                          "committed stage measurements are kept)",
                                          run.limit_s);
        } else if (status.signal != 0) {
            // Killed from outside (an operator, the OOM killer) or crashed: its last words were
            // not about why.
            outcome.status = KeyStatus::Failed;
            outcome.message = status.describe();
        } else if (!status.success()) {
            outcome.status = KeyStatus::Failed;
            const std::string said = last_error_line(read_file(outcome.log_path));
            outcome.message = said.empty() ? status.describe()
                                           : fmt::format("{} ({})", said, status.describe());
        } else {
            try {
                read_summary(json::parse(read_file(run.stdout_path)), outcome);
            } catch (const json::exception&) {
                outcome.status = KeyStatus::Failed;
                outcome.message = fmt::format("the search printed no JSON summary into '{}'",
                                              run.stdout_path);
            }
        }
        finished_.push_back(outcome);
        if (progress_) progress_(finished_.back(), finished_.size(), total_);
    }

    const TuningPlan& plan_;
    const FleetOptions& options_;
    const KeyProgress& progress_;
    std::string log_dir_;
    std::vector<std::optional<Running>> workers_;
    std::vector<KeyOutcome> finished_;
    std::size_t total_ = 0;
};

void check_devices(const std::vector<std::string>& devices) {
    std::set<std::string> seen;
    for (const std::string& device : devices) {
        if (device.empty() || device.find(',') != std::string::npos)
            throw Error(fmt::format("'{}' is not one GPU; --devices takes a comma-separated list "
                                    "of GPU indices (or UUIDs), as CUDA_VISIBLE_DEVICES does",
                                    device));
        if (!seen.insert(device).second)
            throw Error(fmt::format("GPU {} is listed twice in --devices; each GPU gets one "
                                    "worker",
                                    device));
    }
}

}  // namespace

const char* to_string(KeyStatus status) {
    switch (status) {
        case KeyStatus::Tuned: return "tuned";
        case KeyStatus::Stored: return "stored";
        case KeyStatus::Failed: return "failed";
        case KeyStatus::TimedOut: return "timeout";
    }
    return "?";
}

int FleetReport::count(KeyStatus status) const {
    return static_cast<int>(std::count_if(keys.begin(), keys.end(), [status](const KeyOutcome& k) {
        return k.status == status;
    }));
}

bool FleetReport::all_succeeded() const {
    return count(KeyStatus::Failed) == 0 && count(KeyStatus::TimedOut) == 0;
}

std::vector<std::string> search_command(const PlanKey& key, const FleetOptions& options) {
    std::vector<std::string> argv = {options.iostune_exe, "search",
                                     "--model", key.model,
                                     "--batch", std::to_string(key.batch),
                                     "--precision", key.precision,
                                     "--db", options.db_path,
                                     "--format", "json"};
    if (!options.force) argv.push_back("--skip-stored");
    argv.insert(argv.end(), key.search_args.begin(), key.search_args.end());
    return argv;
}

FleetReport run_fleet(const TuningPlan& plan, const FleetOptions& options,
                      const KeyProgress& progress) {
    check_devices(options.devices);
    std::vector<std::size_t> positions;
    if (options.chunk) {
        positions = chunk_keys(plan, *options.chunk);
    } else {
        for (std::size_t i = 0; i < plan.keys.size(); ++i) positions.push_back(i);
    }
    Dispatcher dispatcher(plan, options, progress);
    return dispatcher.run(positions);
}

}  // namespace iostune
