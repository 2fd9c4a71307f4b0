#include "tuning/slurm_array.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "iostune/version.h"
#include "src/error.h"

namespace iostune {

namespace {

namespace fs = std::filesystem;

// Minutes a task may take beyond its keys' own limits: loading models, starting searches.
constexpr double kTaskOverheadS = 300;

// One shell word, whatever the text holds.
std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::optional<double> key_limit(const TuningPlan& plan, const SlurmOptions& options) {
    double longest = 0;
    for (const PlanKey& key : plan.keys) {
        const double limit = options.timeout_s.value_or(key.timeout_s);
        if (limit <= 0) return std::nullopt;  // a key without a limit: no task limit either
        longest = std::max(longest, limit);
    }
    return longest;
}

// #SBATCH lines shared by the array and the merge job.
std::string sbatch_extra(const SlurmOptions& options) {
    std::string lines;
    for (const std::string& arg : options.sbatch_args) lines += "#SBATCH " + arg + "\n";
    return lines;
}

void write_text(const fs::path& path, const std::string& text, bool executable) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out)
        throw Error(fmt::format("cannot write '{}'; check that the folder is writable",
                                path.string()));
    if (executable)
        fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                        fs::perm_options::add);
}

std::string keys_table(const TuningPlan& plan, int chunk_size) {
    std::string text = "task\tkey\tmodel\n";
    for (std::size_t i = 0; i < plan.keys.size(); ++i)
        text += fmt::format("{}\t{}\t{}\n", i / chunk_size, plan.keys[i].label(),
                            plan.keys[i].model);
    return text;
}

// A folder that already holds another plan's array keeps it: its tasks may still be running.
void check_dir_free(const fs::path& dir, const std::string& plan_text) {
    const fs::path existing = dir / "plan.json";
    if (!fs::exists(existing)) return;
    std::ifstream in(existing, std::ios::binary);
    const std::string held{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (held != plan_text)
        throw Error(fmt::format("'{}' already holds the Slurm array of another plan ({}); emit "
                                "into a new folder, so tasks of that array still running keep "
                                "their keys",
                                dir.string(), existing.string()));
}

}  // namespace

std::string tune_script_text(const TuningPlan& plan, const SlurmOptions& options,
                             const std::string& dir) {
    const int tasks = chunk_count(plan, options.chunk_size);
    std::string header = fmt::format(
        "#!/bin/bash\n"
        "# iostune tuning array, emitted by iostune {} ({}) from {}:\n"
        "# {} keys in {} array tasks of up to {} key(s) each (keys.tsv lists them). Submit it\n"
        "# with submit.sh (this array, then merge.sh once it is done) or alone with sbatch.\n"
        "#SBATCH --job-name=iostune-tune\n"
        "#SBATCH --array=0-{}\n"
        "#SBATCH --output={}/logs/tune-%A_%a.out\n",
        kVersion, kGitCommit, plan.path.empty() ? "a plan" : plan.path, plan.keys.size(), tasks,
        options.chunk_size, tasks - 1, dir);
    if (options.gres != "none" && !options.gres.empty())
        header += fmt::format("#SBATCH --gres={}\n", options.gres);
    if (const auto limit = key_limit(plan, options))
        header += fmt::format("#SBATCH --time={}\n",
                              static_cast<long>(std::ceil(
                                  (*limit * options.chunk_size + kTaskOverheadS) / 60.0)));
    header += sbatch_extra(options);
    const std::string timeout =
        options.timeout_s ? fmt::format(" --timeout {:g}", *options.timeout_s) : std::string();
    return header + fmt::format(
        "set -uo pipefail\n"
        "IOSTUNE=${{IOSTUNE:-{exe}}}\n"
        "task=${{SLURM_ARRAY_TASK_ID:?run this script with sbatch: it is an array job}}\n"
        "# SQLite wants a local disk: the task's database is written there and copied next to\n"
        "# the other parts when it ends.\n"
        "local_db=\"${{IOSTUNE_LOCAL_DIR:-${{TMPDIR:-/tmp}}}}/iostune-${{SLURM_ARRAY_JOB_ID:-$$}}-$task.db\"\n"
        "part={dir}/parts/part-\"$task\".db\n"
        "# A task run again starts from its part: the keys it stored are skipped.\n"
        "if [ -s \"$part\" ]; then cp -- \"$part\" \"$local_db\" || exit 1; fi\n"
        "\"$IOSTUNE\" tune --plan {plan} --db \"$local_db\" --log-dir {dir}/logs/task-\"$task\" \\\n"
        "    --chunk-size {chunk} --chunk \"$task\"{timeout}\n"
        "status=$?\n"
        "if [ -s \"$local_db\" ]; then\n"
        "  if cp -- \"$local_db\" \"$part.partial\" && mv -f -- \"$part.partial\" \"$part\"; then\n"
        "    rm -f -- \"$local_db\"\n"
        "  else\n"
        "    echo \"iostune: task $task could not copy its database $local_db to $part\" >&2\n"
        "    status=1\n"
        "  fi\n"
        "else\n"
        "  echo \"iostune: task $task stored nothing (see the log above)\" >&2\n"
        "fi\n"
        "exit $status\n",
        fmt::arg("exe", quoted(options.iostune_exe)), fmt::arg("dir", quoted(dir)),
        fmt::arg("plan", quoted(dir + "/plan.json")), fmt::arg("chunk", options.chunk_size),
        fmt::arg("timeout", timeout));
}

std::string merge_script_text(const SlurmOptions& options, const std::string& dir) {
    return fmt::format(
        "#!/bin/bash\n"
        "# Merges the tuning array's parts into all.db and reports it; safe to run again (a part\n"
        "# merged before adds nothing). submit.sh queues it after the array.\n"
        "#SBATCH --job-name=iostune-merge\n"
        "#SBATCH --output={dir}/logs/merge-%j.out\n"
        "{extra}"
        "set -euo pipefail\n"
        "IOSTUNE=${{IOSTUNE:-{exe}}}\n"
        "shopt -s nullglob\n"
        "parts=({dir}/parts/part-*.db)\n"
        "if [ ${{#parts[@]}} -eq 0 ]; then\n"
        "  echo \"iostune: no parts in \"{dir}\"/parts yet\" >&2\n"
        "  exit 1\n"
        "fi\n"
        "\"$IOSTUNE\" db merge --into {all} \"${{parts[@]}}\"\n"
        "\"$IOSTUNE\" report --db {all}\n",
        fmt::arg("dir", quoted(dir)), fmt::arg("extra", sbatch_extra(options)),
        fmt::arg("exe", quoted(options.iostune_exe)), fmt::arg("all", quoted(dir + "/all.db")));
}

std::string submit_script_text(const std::string& dir) {
    return fmt::format(
        "#!/bin/bash\n"
        "# Queues the tuning array, then the merge of its parts once every task has ended.\n"
        "set -euo pipefail\n"
        "array=$(sbatch --parsable {tune})\n"
        "array=${{array%%;*}}  # --parsable prints JOBID or JOBID;CLUSTER\n"
        "merge=$(sbatch --parsable --dependency=afterany:\"$array\" {merge})\n"
        "echo \"iostune: tuning array $array queued, then merge job ${{merge%%;*}} into \"{all}\n",
        fmt::arg("tune", quoted(dir + "/tune.sbatch")), fmt::arg("merge", quoted(dir + "/merge.sh")),
        fmt::arg("all", quoted(dir + "/all.db")));
}

SlurmArray emit_slurm_array(const TuningPlan& plan, const SlurmOptions& options) {
    if (options.iostune_exe.empty() || !fs::path(options.iostune_exe).is_absolute())
        throw Error(fmt::format("the Slurm scripts need an absolute path to iostune, not '{}'",
                                options.iostune_exe));
    const fs::path dir = fs::absolute(options.dir).lexically_normal();
    const std::string plan_text = plan.document.dump(2) + "\n";
    std::error_code ec;
    fs::create_directories(dir / "parts", ec);
    if (!ec) fs::create_directories(dir / "logs", ec);
    if (ec)
        throw Error(fmt::format("cannot create the Slurm folder '{}': {}", dir.string(),
                                ec.message()));
    check_dir_free(dir, plan_text);

    SlurmArray array;
    array.dir = dir.string();
    array.keys = static_cast<int>(plan.keys.size());
    array.tasks = chunk_count(plan, options.chunk_size);
    array.tune_script = (dir / "tune.sbatch").string();
    array.merge_script = (dir / "merge.sh").string();
    array.submit_script = (dir / "submit.sh").string();
    array.merged_db = (dir / "all.db").string();
    write_text(dir / "plan.json", plan_text, false);
    write_text(dir / "keys.tsv", keys_table(plan, options.chunk_size), false);
    write_text(array.tune_script, tune_script_text(plan, options, array.dir), true);
    write_text(array.merge_script, merge_script_text(options, array.dir), true);
    write_text(array.submit_script, submit_script_text(array.dir), true);
    return array;
}

}  // namespace iostune
