// `iostune tune --plan PLAN --emit-slurm DIR`: a tuning plan as a Slurm array job, one array
// task per chunk of keys, each task on one GPU writing its own database (on the node's local
// disk, copied into DIR/parts when the task ends: no SQLite file is shared over a network file
// system), and a merge job that `iostune db merge`s the parts once the array is done.
//
// DIR gets: plan.json (the plan with model files as absolute paths: the tasks read this copy, so
// editing the original cannot shift which task runs which key), keys.tsv (task, key), tune.sbatch
// (the array), merge.sh (the merge, also runnable by hand), submit.sh (both, the merge after the
// array), parts/ and logs/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuning/tuning_plan.h"

namespace iostune {

struct SlurmOptions {
    std::string dir;
    std::string iostune_exe;  // an absolute path every node can run (IOSTUNE= overrides it)
    int chunk_size = 1;       // keys per array task
    std::string gres = "gpu:1";            // "none": no --gres line (a cluster without GPU gres)
    std::vector<std::string> sbatch_args;  // more #SBATCH options, e.g. --partition=gpu
    std::optional<double> timeout_s;       // a key's limit instead of the plan's
};

struct SlurmArray {
    std::string dir;
    int keys = 0;
    int tasks = 0;
    std::string tune_script, merge_script, submit_script, merged_db;
};

// Throws iostune::Error if DIR cannot be written or already holds another plan's array.
SlurmArray emit_slurm_array(const TuningPlan& plan, const SlurmOptions& options);

// The text of the three scripts, as emit_slurm_array writes them (`dir` absolute).
std::string tune_script_text(const TuningPlan& plan, const SlurmOptions& options,
                             const std::string& dir);
std::string merge_script_text(const SlurmOptions& options, const std::string& dir);
std::string submit_script_text(const std::string& dir);

}  // namespace iostune
