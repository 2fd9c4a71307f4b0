// `iostune db merge --into ALL.db PART.db...`: the parts of a Slurm array (or of any separate
// runs) merged into one schedule database (db/store_merge.h): every schedule and its provenance
// kept, the measured-fastest the best of its key, stage measurements merged; a damaged,
// other-schema or conflicting part refused with nothing merged.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "db/store_merge.h"

namespace iostune::cli {

namespace {

struct MergeOptions {
    std::string into;
    std::vector<std::string> parts;
};

void run_merge(const MergeOptions& o) {
    const db::MergeSummary s = db::merge_stores(o.into, o.parts);
    fmt::print("merged {} part{} into {}: {} schedule{} added ({} held already), {} stage "
               "measurement{} added, {} replaced by newer ones ({} kept as held), {} device{} and "
               "{} model{} new; it holds {} keys. `iostune report --db {}` shows each key's best.\n",
               s.parts, s.parts == 1 ? "" : "s", o.into, s.schedules_added,
               s.schedules_added == 1 ? "" : "s", s.schedules_present, s.stages_added,
               s.stages_added == 1 ? "" : "s", s.stages_replaced, s.stages_present,
               s.devices_added, s.devices_added == 1 ? "" : "s", s.models_added,
               s.models_added == 1 ? "" : "s", s.keys, o.into);
}

}  // namespace

void add_db_command(CLI::App& app) {
    CLI::App* db = app.add_subcommand("db", "Operations on schedule databases");
    db->require_subcommand(1);
    auto o = std::make_shared<MergeOptions>();
    CLI::App* merge = db->add_subcommand(
        "merge", "Merge schedule databases (a Slurm array's parts) into one; the parts are only read");
    merge->add_option("--into", o->into, "the merged database (created if missing)")->required();
    merge->add_option("parts", o->parts, "the databases to merge into it")->required();
    merge->callback([o] { run_merge(*o); });
}

}  // namespace iostune::cli
