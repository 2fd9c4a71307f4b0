// The Slurm array a plan becomes (tuning/slurm_array.h): the files, one task per chunk, the
// GPU request (or none), a time limit from the keys' timeouts, paths quoted for the shell, and
// a folder holding another plan's array left alone. (The scripts run for real on a localhost
// cluster in slurm_cluster.sh.)
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "src/error.h"
#include "tests/fleet/fleet_test_support.h"
#include "tuning/slurm_array.h"
#include "tuning/tuning_plan.h"

using iostune::emit_slurm_array;
using iostune::load_tuning_plan;
using iostune::SlurmArray;
using iostune::SlurmOptions;
using iostune::TuningPlan;
using iostune::testing::read_text;
using iostune::testing::TempDir;
using iostune::testing::write_text;
using Catch::Matchers::Contains;

namespace {

// Five keys: chunks of two leave a short last one.
TuningPlan five_keys(const TempDir& dir, double timeout_s = 600) {
    write_text(dir.file("plan.json"),
               fmt::format(R"({{"models": ["googlenet", "resnet50",
                                            {{"model": "local/m.json", "precisions": ["tf32"]}}],
                               "precisions": ["tf32", "fp16"], "timeout_s": {}}})",
                           timeout_s));
    return load_tuning_plan(dir.file("plan.json"));
}

SlurmOptions options_in(const TempDir& dir, const std::string& sub = "array") {
    SlurmOptions options;
    options.dir = dir.file(sub);
    options.iostune_exe = "/opt/iostune/bin/iostune";
    options.chunk_size = 2;
    return options;
}

bool executable(const std::string& path) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && (info.st_mode & S_IXUSR);
}

}  // namespace

TEST_CASE("an array of one task per chunk, each on one GPU, with the merge after it",
          "[fleet][slurm]") {
    TempDir dir;
    const TuningPlan plan = five_keys(dir);
    const SlurmArray array = emit_slurm_array(plan, options_in(dir));
    CHECK(array.keys == 5);
    CHECK(array.tasks == 3);
    const std::string tune = read_text(array.tune_script);
    CHECK_THAT(tune, Contains("#SBATCH --array=0-2\n") && Contains("#SBATCH --gres=gpu:1\n"));
    // Two keys of 600 s each and five minutes of set-up: 25 minutes.
    CHECK_THAT(tune, Contains("#SBATCH --time=25\n"));
    CHECK_THAT(tune, Contains("IOSTUNE=${IOSTUNE:-'/opt/iostune/bin/iostune'}"));
    CHECK_THAT(tune, Contains("tune --plan '" + array.dir + "/plan.json'") &&
                         Contains("--chunk-size 2 --chunk \"$task\""));
    // Each task writes its database on local disk and copies it into parts/ at the end.
    CHECK_THAT(tune, Contains("local_db=\"${IOSTUNE_LOCAL_DIR:-${TMPDIR:-/tmp}}") &&
                         Contains("part='" + array.dir + "'/parts/part-\"$task\".db"));
    CHECK_THAT(read_text(array.merge_script),
               Contains("db merge --into '" + array.dir + "/all.db' \"${parts[@]}\""));
    CHECK_THAT(read_text(array.submit_script), Contains("--dependency=afterany:\"$array\""));
    CHECK(executable(array.tune_script));
    CHECK(executable(array.merge_script));
    CHECK(executable(array.submit_script));

    // The tasks read the folder's copy of the plan, its model files by absolute path.
    const TuningPlan copy = load_tuning_plan(array.dir + "/plan.json");
    REQUIRE(copy.keys.size() == 5);
    CHECK(copy.keys[4].model == dir.file("local/m.json"));
    CHECK_THAT(read_text(array.dir + "/keys.tsv"),
               Contains("1\tresnet50 b1 fp16\tresnet50\n") &&
                   Contains("2\tm b1 tf32\t" + dir.file("local/m.json") + "\n"));
}

TEST_CASE("no GPU request, a limit of each key's own, more #SBATCH options", "[fleet][slurm]") {
    TempDir dir;
    SlurmOptions options = options_in(dir);
    options.gres = "none";
    options.timeout_s = 60;
    options.sbatch_args = {"--partition=gpu", "--account=vision"};
    const SlurmArray array = emit_slurm_array(five_keys(dir), options);
    const std::string tune = read_text(array.tune_script);
    CHECK_THAT(tune, !Contains("--gres"));
    CHECK_THAT(tune, Contains("#SBATCH --time=7\n") && Contains("--timeout 60"));
    CHECK_THAT(tune, Contains("#SBATCH --partition=gpu\n#SBATCH --account=vision\n"));
    CHECK_THAT(read_text(array.merge_script), Contains("#SBATCH --partition=gpu\n"));

    // A key without a limit: no task limit either (the cluster's default applies).
    const SlurmArray unlimited = emit_slurm_array(five_keys(dir, 0), options_in(dir, "unlimited"));
    CHECK_THAT(read_text(unlimited.tune_script), !Contains("--time"));
}

TEST_CASE("paths with spaces and quotes stay one shell word", "[fleet][slurm]") {
    TempDir dir;
    SlurmOptions options = options_in(dir, "it's a dir");
    options.iostune_exe = "/opt/my tools/iostune";
    const SlurmArray array = emit_slurm_array(five_keys(dir), options);
    const std::string tune = read_text(array.tune_script);
    CHECK_THAT(tune, Contains("IOSTUNE=${IOSTUNE:-'/opt/my tools/iostune'}"));
    CHECK_THAT(tune, Contains("'" + dir.file("it'\\''s a dir") + "/plan.json'"));
    // bash parses every script (the folder's name holds a quote and spaces).
    for (const std::string& script : {array.tune_script, array.merge_script, array.submit_script})
        CHECK(std::system(("bash -n \"" + script + "\"").c_str()) == 0);
}

TEST_CASE("a folder holding another plan's array is left alone", "[fleet][slurm]") {
    TempDir dir;
    const SlurmArray first = emit_slurm_array(five_keys(dir), options_in(dir));
    const std::string plan_before = read_text(first.dir + "/plan.json");
    // The same plan again: the same files.
    CHECK_NOTHROW(emit_slurm_array(five_keys(dir), options_in(dir)));
    TuningPlan other = five_keys(dir, 60);
    CHECK_THROWS_WITH(emit_slurm_array(other, options_in(dir)),
                      Contains("already holds the Slurm array of another plan"));
    CHECK(read_text(first.dir + "/plan.json") == plan_before);
    SlurmOptions relative = options_in(dir);
    relative.iostune_exe = "iostune";
    CHECK_THROWS_WITH(emit_slurm_array(five_keys(dir), relative), Contains("absolute path"));
}
