#include "tuning/tuning_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <tuple>

#include "src/error.h"
#include "src/precision.h"

namespace iostune {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::set<std::string> kPlanFields = {"models", "batches", "precisions", "search",
                                           "timeout_s", "comment"};
const std::set<std::string> kModelFields = {"model", "batches", "precisions", "search",
                                            "timeout_s", "comment"};
// What makes the key, and what `tune` sets on every search it runs.
const std::set<std::string> kReservedOptions = {"model", "m", "b", "batch", "precision", "math",
                                                "db", "format", "skip-stored", "help", "h",
                                                "shared-input"};

// Where in the plan a value was read, for messages.
struct Place {
    const std::string& origin;
    std::string where;

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(fmt::format("tuning plan '{}': {}: {}. See docs/fleet.md for the format.",
                                origin, where, what));
    }
    Place at(const std::string& inner) const { return {origin, where + inner}; }
};

void check_fields(const json& object, const std::set<std::string>& known, const Place& place) {
    for (const auto& [name, value] : object.items())
        if (!known.count(name))
            place.fail(fmt::format("unknown field '{}' (known: {})", name,
                                   fmt::join(known.begin(), known.end(), ", ")));
}

bool is_model_file(const std::string& spec) {
    const std::string ext = fs::path(spec).extension().string();
    return ext == ".json" || ext == ".onnx" || spec.find('/') != std::string::npos;
}

std::string resolve_model(const std::string& spec, const std::string& base_dir) {
    if (!is_model_file(spec) || fs::path(spec).is_absolute()) return spec;
    return fs::absolute(fs::path(base_dir) / spec).lexically_normal().string();
}

std::vector<int> read_batches(const json& value, const Place& place) {
    if (!value.is_array() || value.empty()) place.fail("must be a non-empty list of batch sizes");
    std::vector<int> batches;
    for (const json& batch : value) {
        if (!batch.is_number_integer() || batch.get<long long>() < 1 ||
            batch.get<long long>() > 1 << 20)
            place.fail(fmt::format("batch size {} is not a positive integer", batch.dump()));
        batches.push_back(batch.get<int>());
    }
    return batches;
}

std::vector<std::string> read_precisions(const json& value, const Place& place) {
    if (!value.is_array() || value.empty()) place.fail("must be a non-empty list of precisions");
    std::vector<std::string> precisions;
    for (const json& precision : value) {
        if (!precision.is_string()) place.fail(fmt::format("{} is not a precision name", precision.dump()));
        try {
            precision_from_string(precision.get<std::string>());
        } catch (const Error& e) {
            place.fail(e.what());
        }
        precisions.push_back(precision.get<std::string>());
    }
    return precisions;
}

double read_timeout(const json& value, const Place& place) {
    if (!value.is_number() || value.get<double>() < 0)
        place.fail("must be a number of seconds, 0 for no limit");
    return value.get<double>();
}

// The plan's search options with a model's laid over them: its values replace, its
// extra_args follow the plan's.
json merged_search(const json& plan, const json& model) {
    json out = plan;
    for (const auto& [name, value] : model.items()) {
        if (name == "extra_args" && out.contains(name))
            out[name].insert(out[name].end(), value.begin(), value.end());
        else
            out[name] = value;
    }
    return out;
}

std::string option_value(const json& value, const Place& place) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number_integer()) return std::to_string(value.get<long long>());
    if (value.is_number()) return fmt::format("{}", value.get<double>());
    if (value.is_array()) {
        std::vector<std::string> items;
        for (const json& item : value) {
            if (item.is_array() || item.is_object() || item.is_null() || item.is_boolean())
                place.fail("a list may hold only strings and numbers");
            items.push_back(option_value(item, place));
        }
        return fmt::format("{}", fmt::join(items, ","));  // CLI11 lists in search are ','-joined
    }
    place.fail(fmt::format("{} is not an option value (a string, number, list or true/false)",
                           value.dump()));
}

void check_option_name(const std::string& name, const Place& place) {
    static const std::regex kName("[a-z][a-z0-9-]*");
    if (!std::regex_match(name, kName)) place.fail(fmt::format("'{}' is not an option name", name));
    if (kReservedOptions.count(name))
        place.fail(fmt::format("--{} is set by the plan's keys or by `iostune tune` itself", name));
}

std::vector<std::string> extra_args(const json& value, const Place& place) {
    if (!value.is_array()) place.fail("must be a list of command-line words");
    std::vector<std::string> words;
    for (const json& word : value) {
        if (!word.is_string()) place.fail(fmt::format("{} is not a string", word.dump()));
        const std::string text = word.get<std::string>();
        // "--name", "--name=value", or a short "-n" (search's -m and -b).
        const std::size_t dashes = text.rfind("--", 0) == 0 ? 2 : text.rfind('-', 0) == 0 ? 1 : 0;
        const std::string name =
            dashes == 2 ? text.substr(2, text.find('=') - 2) : text.substr(dashes, 1);
        if (dashes > 0 && kReservedOptions.count(name))
            place.fail(fmt::format("{}{} is set by the plan's keys or by `iostune tune` itself",
                                   std::string(dashes, '-'), name));
        words.push_back(text);
    }
    return words;
}

// `iostune search` words for a plan's "search" object: named options in name order (an
// underscore in a name stands for a dash), then extra_args as they are.
std::vector<std::string> search_args(const json& search, const Place& place) {
    if (!search.is_object()) place.fail("must be an object of `iostune search` options");
    std::vector<std::string> args;
    for (const auto& [key, value] : search.items()) {
        if (key == "extra_args") continue;
        std::string name = key;
        std::replace(name.begin(), name.end(), '_', '-');
        const Place option = place.at("." + key);
        check_option_name(name, option);
        if (value.is_boolean()) {
            if (value.get<bool>()) args.push_back("--" + name);
            continue;
        }
        args.push_back("--" + name);
        args.push_back(option_value(value, option));
    }
    if (search.contains("extra_args")) {
        const std::vector<std::string> extra = extra_args(search["extra_args"], place.at(".extra_args"));
        args.insert(args.end(), extra.begin(), extra.end());
    }
    return args;
}

struct Defaults {
    std::vector<int> batches = {1};
    std::vector<std::string> precisions = {"tf32"};
    json search = json::object();
    double timeout_s = kDefaultKeyTimeoutS;
};

Defaults plan_defaults(const json& document, const Place& place) {
    Defaults d;
    if (document.contains("batches")) d.batches = read_batches(document["batches"], place.at("batches"));
    if (document.contains("precisions"))
        d.precisions = read_precisions(document["precisions"], place.at("precisions"));
    if (document.contains("search")) {
        d.search = document["search"];
        search_args(d.search, place.at("search"));  // checked here, named at the plan's level
    }
    if (document.contains("timeout_s")) d.timeout_s = read_timeout(document["timeout_s"], place.at("timeout_s"));
    return d;
}

// One entry of "models": a name or path, or an object overriding the plan's fields.
void add_model_keys(json& entry, const Defaults& plan, const std::string& base_dir,
                    const Place& place, std::vector<PlanKey>& keys) {
    Defaults d = plan;
    std::string spec;
    if (entry.is_string()) {
        spec = entry.get<std::string>();
    } else if (entry.is_object()) {
        check_fields(entry, kModelFields, place);
        if (!entry.contains("model") || !entry["model"].is_string())
            place.fail("needs \"model\": a zoo name or a model file");
        spec = entry["model"].get<std::string>();
        if (entry.contains("batches")) d.batches = read_batches(entry["batches"], place.at(".batches"));
        if (entry.contains("precisions"))
            d.precisions = read_precisions(entry["precisions"], place.at(".precisions"));
        if (entry.contains("search")) d.search = merged_search(d.search, entry["search"]);
        if (entry.contains("timeout_s"))
            d.timeout_s = read_timeout(entry["timeout_s"], place.at(".timeout_s"));
    } else {
        place.fail("must be a model name, a model file, or an object with \"model\"");
    }
    if (spec.empty()) place.fail("names no model");
    spec = resolve_model(spec, base_dir);
    (entry.is_string() ? entry : entry["model"]) = spec;
    const std::vector<std::string> args = search_args(d.search, place.at(".search"));
    for (int batch : d.batches)
        for (const std::string& precision : d.precisions)
            keys.push_back({spec, batch, precision, args, d.timeout_s});
}

void check_unique(const std::vector<PlanKey>& keys, const Place& place) {
    std::set<std::tuple<std::string, int, std::string>> seen;
    for (const PlanKey& key : keys)
        if (!seen.emplace(key.model, key.batch, key.precision).second)
            place.fail(fmt::format("the key '{}' appears twice", key.label()));
}

}  // namespace

std::string PlanKey::label() const {
    const std::string name = is_model_file(model) ? fs::path(model).stem().string() : model;
    return fmt::format("{} b{} {}", name, batch, precision);
}

TuningPlan tuning_plan_from_json(const nlohmann::json& document, const std::string& base_dir,
                                 const std::string& origin) {
    const Place place{origin, "the plan"};
    if (!document.is_object()) place.fail("must be a JSON object");
    check_fields(document, kPlanFields, place);
    if (!document.contains("models") || !document["models"].is_array() ||
        document["models"].empty())
        place.fail("needs \"models\": a non-empty list of zoo names or model files");
    const Defaults defaults = plan_defaults(document, Place{origin, ""});
    TuningPlan plan;
    plan.document = document;
    json& models = plan.document["models"];
    for (std::size_t i = 0; i < models.size(); ++i)
        add_model_keys(models[i], defaults, base_dir, Place{origin, fmt::format("models[{}]", i)},
                       plan.keys);
    check_unique(plan.keys, place);
    return plan;
}

int chunk_count(const TuningPlan& plan, int chunk_size) {
    if (chunk_size < 1) throw Error(fmt::format("chunk size {} is not a positive number", chunk_size));
    return static_cast<int>((plan.keys.size() + chunk_size - 1) / chunk_size);
}

std::vector<std::size_t> chunk_keys(const TuningPlan& plan, const KeyChunk& chunk) {
    const int chunks = chunk_count(plan, chunk.size);
    if (chunk.index < 0 || chunk.index >= chunks)
        throw Error(fmt::format("the plan '{}' has {} keys, {} chunk{} of {}: there is no chunk {} "
                                "(chunks count from 0)",
                                plan.path, plan.keys.size(), chunks, chunks == 1 ? "" : "s",
                                chunk.size, chunk.index));
    std::vector<std::size_t> positions;
    const std::size_t first = static_cast<std::size_t>(chunk.index) * chunk.size;
    for (std::size_t i = first; i < std::min(plan.keys.size(), first + chunk.size); ++i)
        positions.push_back(i);
    return positions;
}

TuningPlan load_tuning_plan(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        throw Error(fmt::format("cannot read tuning plan '{}'; check the path (docs/fleet.md "
                                "describes the format)",
                                path));
    json document;
    try {
        document = json::parse(in);
    } catch (const json::parse_error& e) {
        throw Error(fmt::format("tuning plan '{}' is not valid JSON: {}", path, e.what()));
    }
    const std::string base_dir = fs::absolute(path).parent_path().string();
    TuningPlan plan = tuning_plan_from_json(document, base_dir, path);
    plan.path = path;
    return plan;
}

}  // namespace iostune
