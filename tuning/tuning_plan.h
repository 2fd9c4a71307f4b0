// A tuning plan (docs/fleet.md): the (model, batch, precision) keys a fleet tunes and the
// `iostune search` options of each, read from a JSON file. `iostune tune` runs its keys, and
// `--emit-slurm` turns it into a Slurm array.
//
// Search options are passed through to `iostune search` as they are named there ("r": 3 gives
// `--r 3`, "contenders": ["greedy"] gives `--contenders greedy`, true gives the bare flag), and
// "extra_args" verbatim, so an option `search` gains is usable in a plan without a change here.
// The options that make the key (model, batch, precision) and those `tune` itself sets (db,
// format, skip-stored) are refused there.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace iostune {

struct PlanKey {
    std::string model;  // as `--model` takes it: a zoo name, or a file's absolute path
    int batch = 1;
    std::string precision;
    std::vector<std::string> search_args;  // the options of `iostune search`, in order
    double timeout_s = 0;                  // 0: no limit

    // "inception_v3 b1 fp16": a file's model by its file name without the extension.
    std::string label() const;
};

struct TuningPlan {
    std::string path;  // the file it was read from ("" when built from a document)
    std::vector<PlanKey> keys;  // models, then batches, then precisions, in the file's order
    nlohmann::json document;    // as read, with every model file's path made absolute
};

// Throws iostune::Error naming the file and the entry for a malformed plan: unknown fields, no
// models, a batch that is not a positive integer, an unknown precision, a search option that is
// not a name (or is one tune owns), a duplicated key.
TuningPlan load_tuning_plan(const std::string& path);
// `base_dir` resolves relative model file paths; `origin` names the plan in messages.
TuningPlan tuning_plan_from_json(const nlohmann::json& document, const std::string& base_dir,
                                 const std::string& origin);

inline constexpr double kDefaultKeyTimeoutS = 1800;

// A slice of a plan's keys: chunk `index` of those cut into runs of `size` (the last may be
// shorter). A Slurm array task tunes one chunk.
struct KeyChunk {
    int index = 0;
    int size = 1;
};
int chunk_count(const TuningPlan& plan, int chunk_size);
// The plan positions of the chunk's keys; throws iostune::Error for a chunk the plan lacks.
std::vector<std::size_t> chunk_keys(const TuningPlan& plan, const KeyChunk& chunk);

}  // namespace iostune
