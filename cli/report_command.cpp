// `iostune report`: queries over the schedule store. Without --schedule: the best schedule per
// (model, device, batch, precision) with speedup over sequential, predicted vs measured, the
// search cost and where the schedule came from (db/schedule_origin.h), as a table, JSON, CSV or
// Markdown (the rows and their JSON: db/report_rows.h), grouped by device type (GPU model) when
// the DB holds several (a fleet's merged parts), and the batch sizes tuned per model, device and
// precision. With --schedule ID: that schedule's stages, and optionally a Graphviz diagram of
// them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/positive_number.h"
#include "db/report_rows.h"
#include "db/schedule_origin.h"
#include "db/schedule_store.h"
#include "replay/device_match.h"
#include "replay/schedule_dot.h"
#include "src/error.h"
#include "src/model_json.h"
#include "src/model_set.h"

namespace iostune::cli {

namespace {

struct ReportOptions {
    std::string db = db::kDefaultDatabasePath;
    std::string model;
    std::string device;
    int batch = 0;          // 0: every batch size
    std::string precision;  // empty: every precision
    std::string format = "table";
    std::int64_t schedule_id = 0;
    std::string dot_path;
    bool sets = false;
};

bool is_estimate(const db::ReportRow& row) { return !row.schedule.measured_ms.has_value(); }

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return text;
}

// --model matches a name exactly or a fingerprint prefix; --device any part of the GPU's name;
// --batch and --precision exactly.
bool selected(const db::ReportRow& row, const ReportOptions& o) {
    if (!o.model.empty() && row.model_name != o.model && row.fingerprint.rfind(o.model, 0) != 0)
        return false;
    if (o.batch != 0 && row.schedule.batch != o.batch) return false;
    if (!o.precision.empty() && row.schedule.precision != o.precision) return false;
    return o.device.empty() || lower(row.device.name).find(lower(o.device)) != std::string::npos;
}

// The filters given, as the command line spelt them (" --model x --batch 16"), for messages.
std::string filters(const ReportOptions& o) {
    std::string text;
    if (!o.model.empty()) text += fmt::format(" --model {}", o.model);
    if (!o.device.empty()) text += fmt::format(" --device {}", o.device);
    if (o.batch != 0) text += fmt::format(" --batch {}", o.batch);
    if (!o.precision.empty()) text += fmt::format(" --precision {}", o.precision);
    return text;
}

nlohmann::json value_or_null(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string fixed(const std::optional<double>& v, const char* spec = "{:.4f}") {
    return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
}

// Display cells of one row; estimates are marked on every number that is one.
std::vector<std::string> row_cells(const db::ReportRow& row) {
    const db::ScheduleRecord& s = row.schedule;
    const bool estimate = is_estimate(row);
    const std::string est = estimate ? " (est)" : "";
    return {fmt::format("{}", s.id),
            row.model_name,
            row.device.name,
            fmt::format("{}", s.batch),
            s.precision,
            s.layout,
            s.r > 0 ? fmt::format("{} r={} s={}", s.strategy, s.r, s.s) : s.strategy,
            fixed(s.measured_ms),
            fixed(s.sequential_ms) + est,
            row.speedup ? fmt::format("{:.2f}x{}", *row.speedup, est) : "-",
            fixed(s.predicted_ms) + est,
            row.prediction_error ? fmt::format("{:+.1f}%", 100.0 * *row.prediction_error) : "-",
            fixed(row.search_seconds, "{:.1f}"),
            s.arena_bytes ? fmt::format("{:.1f}", double(*s.arena_bytes) / (1 << 20)) : "-",
            estimate ? "estimate (simulated)" : "measured",
            db::origin_label(db::schedule_origin(s))};
}

// "arena MiB": the memory plan of the schedule (activations, scratch, inputs and outputs).
// "origin": the search's own streams ("search: START +MOVES"), a baseline's streams on kernels
// the search chose, or a baseline's schedule unchanged (print_origin_note says so).
const std::vector<std::string> kHeaders = {
    "id",           "model",       "device",   "batch",     "precision",
    "layout",       "strategy",    "latency ms", "sequential ms", "speedup",
    "predicted ms", "pred. error", "search s", "arena MiB", "kind", "origin"};

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

void print_estimate_note(const std::vector<db::ReportRow>& rows) {
    if (std::any_of(rows.begin(), rows.end(), is_estimate))
        fmt::print(
            "(est): simulated cost model, an estimate; measure on the GPU with `iostune "
            "search --cost measured`\n");
}

// Keys whose best keeps a baseline's streams: whether it is that baseline's schedule as a
// baseline replay runs it, or runs on kernels the search chose.
void print_origin_note(const std::vector<db::ReportRow>& rows) {
    for (const db::ReportRow& row : rows) {
        const db::ScheduleOrigin origin = db::schedule_origin(row.schedule);
        if (origin.kind == db::OriginKind::SearchKernels)
            fmt::print("(origin): {} b{} {}: the search kept {}'s streams and chose their "
                       "kernels ({}), which `replay --schedule-source` does not run\n",
                       row.model_name, row.schedule.batch, row.schedule.precision,
                       origin.baseline, origin.kernels == "corun"
                                                ? "to co-run"
                                                : "switched one by one where the schedule "
                                                  "ran faster");
        else if (origin.kind == db::OriginKind::Baseline)
            fmt::print("(origin): {} b{} {}: a baseline's schedule ({}): nothing the search "
                       "made was faster\n",
                       row.model_name, row.schedule.batch, row.schedule.precision,
                       origin.baseline);
    }
}

// Keys whose search chose some convolutions in a hurry (past its share of the time budget).
void print_quick_note(const std::vector<db::ReportRow>& rows) {
    for (const db::ReportRow& row : rows)
        if (const int quick = db::quick_convolutions(row.schedule); quick > 0)
            fmt::print("(quick): {} b{} {}: {} convolution shape{} chosen from a few candidates "
                       "when its search ran short of time; `iostune search` again (or a longer "
                       "--time-budget) times {} in full\n",
                       row.model_name, row.schedule.batch, row.schedule.precision, quick,
                       quick == 1 ? "" : "s", quick == 1 ? "it" : "them");
}

// Per model, device and precision, the batch sizes it was tuned for: what `iostune replay
// --batch-sizes` (and a BatchReplayer) can serve without padding.
void print_tuned_batches(const std::vector<db::ReportRow>& rows) {
    std::vector<std::string> lines;
    for (const db::ReportRow& row : rows) {
        const std::string line = fmt::format(
            "  {} on {}, {}: batch {}", row.model_name, row.device.name, row.schedule.precision,
            fmt::join(db::tuned_batches(rows, row), ", "));
        if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
    }
    fmt::print("tuned batch sizes (a request of any size runs on the smallest that holds it):\n{}\n",
               fmt::join(lines, "\n"));
}

void print_rows(const std::vector<db::ReportRow>& rows, const std::string& format,
                bool footnote = true) {
    if (format == "json") {
        fmt::print("{}\n", db::report_json(rows).dump(2));
        return;
    }
    std::vector<std::vector<std::string>> cells;
    for (const db::ReportRow& row : rows) cells.push_back(row_cells(row));
    if (format == "csv") {
        auto line = [](const std::vector<std::string>& fields) {
            std::string text;
            for (const std::string& f : fields) text += (text.empty() ? "" : ",") + csv_field(f);
            return text;
        };
        fmt::print("{}\n", line(kHeaders));
        for (const auto& row : cells) fmt::print("{}\n", line(row));
        return;
    }
    std::vector<size_t> widths(kHeaders.size());
    for (size_t c = 0; c < kHeaders.size(); ++c) {
        widths[c] = kHeaders[c].size();
        for (const auto& row : cells) widths[c] = std::max(widths[c], row[c].size());
    }
    const bool md = format == "md";
    auto line = [&](const std::vector<std::string>& fields) {
        std::string text = md ? "|" : "";
        for (size_t c = 0; c < fields.size(); ++c)
            text += fmt::format(fmt::runtime(md ? " {:<{}} |" : "{:<{}}  "), fields[c], widths[c]);
        return text;
    };
    fmt::print("{}\n", line(kHeaders));
    std::vector<std::string> rule;
    for (size_t w : widths) rule.push_back(std::string(w, '-'));
    fmt::print("{}\n", line(rule));
    for (const auto& row : cells) fmt::print("{}\n", line(row));
    if (footnote && !md) {
        print_estimate_note(rows);
        print_origin_note(rows);
        print_quick_note(rows);
        print_tuned_batches(rows);
    }
}

// Rows sorted by device type; a table or Markdown report of a DB that holds several types (a
// fleet's merged parts) gets one table per type under its name. JSON and CSV stay one list.
void print_grouped(const std::vector<db::ReportRow>& rows, const std::string& format) {
    std::vector<std::vector<db::ReportRow>> groups;
    for (const db::ReportRow& row : rows) {
        if (groups.empty() ||
            db::device_type(groups.back().front().device) != db::device_type(row.device))
            groups.emplace_back();
        groups.back().push_back(row);
    }
    if (groups.size() <= 1 || format == "json" || format == "csv") {
        print_rows(rows, format);
        return;
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::string type = db::device_type(groups[g].front().device);
        const std::size_t keys = groups[g].size();
        if (format == "md")
            fmt::print("{}**{}**: {} key{}\n\n", g ? "\n" : "", type, keys, keys == 1 ? "" : "s");
        else
            fmt::print("{}{}: {} key{}\n", g ? "\n" : "", type, keys, keys == 1 ? "" : "s");
        print_rows(groups[g], format, false);
    }
    if (format == "table") {
        print_estimate_note(rows);
        print_origin_note(rows);
        print_quick_note(rows);
        print_tuned_batches(rows);
    }
}

void report_best(const db::ScheduleStore& store, const ReportOptions& o) {
    std::vector<db::ReportRow> rows;
    for (db::ReportRow& row : db::report_rows(store))
        if (selected(row, o)) rows.push_back(std::move(row));
    if (rows.empty() && !filters(o).empty())
        throw Error(fmt::format("no schedule in '{}' matches{}. The database has:\n{}", o.db,
                                filters(o), db::describe_keys(store.list_keys())));
    if (rows.empty() && o.format == "table") {
        fmt::print("'{}' holds no schedules yet; run `iostune search` to add some.\n", o.db);
        return;
    }
    print_grouped(rows, o.format);
}

void report_schedule(const db::ScheduleStore& store, const ReportOptions& o) {
    const std::optional<db::ScheduleRecord> record = store.schedule(o.schedule_id);
    if (!record)
        throw Error(
            fmt::format("'{}' has no schedule #{}; `iostune report --db {}` lists the best "
                        "ones with their ids",
                        o.db, o.schedule_id, o.db));
    const std::optional<db::ModelRecord> model = store.model(record->model_id);
    const std::optional<db::DeviceRecord> device = store.device(record->device_id);
    if (!model || !device)
        throw Error(
            fmt::format("'{}' is inconsistent: schedule #{} names a missing model or "
                        "device row; run `PRAGMA integrity_check` on it",
                        o.db, o.schedule_id));
    const Graph graph =
        graph_from_json(model->graph, fmt::format("{} (model {})", o.db, model->id));
    const Schedule schedule = schedule_from_json(record->schedule);
    if (!o.dot_path.empty()) {
        std::ofstream out(o.dot_path);
        out << schedule_to_dot(graph, schedule,
                               fmt::format("{} batch {}, schedule #{} ({})", model->name,
                                           record->batch, record->id, record->strategy));
        if (!out)
            throw Error(fmt::format("cannot write '{}'; check the folder exists and is writable",
                                    o.dot_path));
    }
    const bool estimate = !record->measured_ms.has_value();
    if (o.format == "json") {
        nlohmann::json doc = {{"schedule_id", record->id},
                              {"model", model->name},
                              {"fingerprint", model->fingerprint},
                              {"device", device->name},
                              {"batch", record->batch},
                              {"precision", record->precision},
                              {"layout", record->layout},
                              {"strategy", record->strategy},
                              {"simulated", estimate},
                              {"measured_ms", value_or_null(record->measured_ms)},
                              {"sequential_ms", value_or_null(record->sequential_ms)},
                              {"predicted_ms", value_or_null(record->predicted_ms)},
                              {"arena_bytes", record->arena_bytes
                                                  ? nlohmann::json(*record->arena_bytes)
                                                  : nlohmann::json(nullptr)},
                              {"origin", db::origin_json(db::schedule_origin(*record))},
                              {"search_stats", record->search_stats},
                              {"schedule", record->schedule}};
        fmt::print("{}\n", doc.dump(2));
        return;
    }
    fmt::print("schedule #{}: {} (fingerprint {}), batch {}, {} {}, {}\n", record->id,
               model->name, model->fingerprint, record->batch, record->precision, record->layout,
               record->strategy);
    fmt::print("device      {}\n", describe_device(*device));
    if (estimate)
        fmt::print("latency     not measured; {} ms predicted vs {} ms sequential (simulated "
                   "estimates)\n",
                   fixed(record->predicted_ms), fixed(record->sequential_ms));
    else
        fmt::print("latency     {} ms measured, {} ms sequential, {} ms predicted\n",
                   fixed(record->measured_ms), fixed(record->sequential_ms),
                   fixed(record->predicted_ms));
    if (record->arena_bytes)
        fmt::print("memory      {:.1f} MiB of activations, scratch, inputs and outputs (its "
                   "memory plan; `iostune show --memory` breaks it down)\n",
                   double(*record->arena_bytes) / (1 << 20));
    // The engine's plan: precision and layout (timed against the other layout, when it was).
    std::string layout_why = "not timed: --layout, or the precision's default";
    if (const auto timed = record->search_stats.find("layout_sequential_ms");
        timed != record->search_stats.end() && timed->is_object()) {
        std::vector<std::string> parts;
        for (const auto& [name, ms] : timed->items())
            parts.push_back(fmt::format("{} {:.4f} ms", name, ms.get<double>()));
        layout_why = fmt::format("the faster sequential schedule: {}", fmt::join(parts, ", "));
    }
    fmt::print("plan        {} activations in {} ({})\n", record->precision, record->layout,
               layout_why);
    fmt::print("origin      {}\n", db::origin_label(db::schedule_origin(*record)));
    fmt::print("created     {} by iostune {} ({})\n", record->created_at, record->tool_version,
               record->git_commit);
    if (const int raised = prioritised_ops(schedule); raised > 0)
        fmt::print("priorities  {} of {} ops at a raised CUDA stream priority; ^k after an op's "
                   "name is its level\n",
                   raised, graph.size());
    int index = 0;
    for (size_t b = 0; b < schedule.blocks.size(); ++b) {
        for (const Stage& stage : schedule.blocks[b]) {
            std::string groups;
            for (const auto& group : stage.groups) {
                std::vector<std::string> names;
                for (int id : group) {
                    const int level = priority_of(schedule, id);
                    names.push_back(level > 0 ? fmt::format("{}^{}", graph.op(id).name, level)
                                              : graph.op(id).name);
                }
                groups +=
                    fmt::format("{}[{}]", groups.empty() ? "" : " | ", fmt::join(names, ", "));
            }
            fmt::print("  block {:>3}  stage {:>4}  {:<10}  {}\n", b, index++,
                       to_string(stage.strategy), groups);
        }
    }
    if (!o.dot_path.empty())
        fmt::print("diagram written to {} (render: dot -Tsvg {} -o schedule.svg)\n", o.dot_path,
                   o.dot_path);
}

// The model sets the store holds (model_set.h): each set's key is its members' fingerprints in
// order and whether they share one input, as its stored graph records.
void report_sets(const db::ScheduleStore& store, const ReportOptions& o) {
    nlohmann::json sets = nlohmann::json::array();
    for (const db::ModelRecord& model : store.models()) {
        if (!model.graph.contains("members")) continue;
        if (!o.model.empty() && lower(model.name).find(lower(o.model)) == std::string::npos &&
            model.fingerprint.rfind(o.model, 0) != 0)
            continue;
        const Graph graph =
            graph_from_json(model.graph, fmt::format("{} (model {})", o.db, model.id));
        nlohmann::json list = nlohmann::json::array();
        for (const GraphMember& m : graph.members())
            list.push_back({{"name", m.name}, {"fingerprint", m.fingerprint}});
        sets.push_back({{"name", model.name}, {"fingerprint", model.fingerprint},
                        {"inputs", to_string(*set_inputs_of(graph))}, {"members", list}});
    }
    if (o.format == "json") {
        fmt::print("{}\n", sets.dump(1));
        return;
    }
    if (sets.empty()) {
        fmt::print("'{}' holds no model sets; search one with `iostune search --model A --model B`\n",
                   o.db);
        return;
    }
    for (const auto& set : sets) {
        fmt::print("{} (fingerprint {}, {} input{}, {} models)\n", set["name"].get<std::string>(),
                   set["fingerprint"].get<std::string>(), set["inputs"].get<std::string>(),
                   set["inputs"] == "shared" ? "" : "s", set["members"].size());
        for (size_t i = 0; i < set["members"].size(); ++i)
            fmt::print("  {}. {} (fingerprint {})\n", i + 1,
                       set["members"][i]["name"].get<std::string>(),
                       set["members"][i]["fingerprint"].get<std::string>());
    }
}

void run_report(const ReportOptions& o) {
    const db::ScheduleStore store = db::ScheduleStore::open(o.db, db::OpenMode::MustExist);
    if (o.sets)
        report_sets(store, o);
    else if (o.schedule_id > 0)
        report_schedule(store, o);
    else
        report_best(store, o);
}

}  // namespace

void add_report_command(CLI::App& app) {
    auto o = std::make_shared<ReportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "report", "Best stored schedule per model/device/batch, or one schedule's stages");
    cmd->add_option("--db", o->db, "schedule database (must exist)")->capture_default_str();
    cmd->add_option("--model", o->model, "only this model (name or fingerprint prefix)");
    cmd->add_option("--device", o->device, "only devices whose name contains this");
    cmd->add_option("--batch", o->batch, "only this batch size")->check(positive_whole_number());
    cmd->add_option("--precision", o->precision, "only this precision: fp32, tf32, fp16 or bf16")
        ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
    cmd->add_flag("--sets", o->sets,
                  "list the model sets (searched with --model given several times): their "
                  "models in order and whether they share one input");
    cmd->add_option("--format", o->format, "output: table, json, csv or md")
        ->check(CLI::IsMember({"table", "json", "csv", "md"}))
        ->capture_default_str();
    auto* id = cmd->add_option("--schedule", o->schedule_id, "show one schedule's stages")
                   ->check(positive_whole_number());
    cmd->add_option("--dot", o->dot_path, "with --schedule: write a Graphviz diagram here")
        ->needs(id);
    cmd->callback([o] { run_report(*o); });
}

}  // namespace iostune::cli
