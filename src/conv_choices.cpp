#include "src/conv_choices.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "src/error.h"

namespace iostune {

namespace {

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// cuDNN's algorithms, then the engine's own channels-last depthwise kernel (widest packs,
// narrowed packs, tiled).
constexpr std::array<std::string_view, 11> kAlgorithms = {
    "IMPLICIT_GEMM",  "IMPLICIT_PRECOMP_GEMM", "GEMM",     "DIRECT",
    "FFT",            "FFT_TILING",            "WINOGRAD", "WINOGRAD_NONFUSED",
    "DEPTHWISE_NHWC", "DEPTHWISE_NHWC_NARROW", "DEPTHWISE_NHWC_TILED"};
constexpr std::array<std::string_view, 3> kMaths = {"DEFAULT_MATH", "TENSOR_OP_MATH", "FMA_MATH"};
constexpr std::array<std::string_view, 7> kPaths = {
    "fused", "conv+epilogue", "conv", "depthwise", "gemm", "graph", "graph+epilogue"};

// "<prefix><rank>" with a rank of one to three digits: the rank, else -1.
int ranked_name(const std::string& name, std::string_view prefix) {
    const size_t length = prefix.size();
    if (name.rfind(prefix, 0) != 0 || name.size() == length || name.size() > length + 3 ||
        name.find_first_not_of("0123456789", length) != std::string::npos)
        return -1;
    return std::stoi(name.substr(length));
}

}  // namespace

const char* to_string(ConvObjective objective) {
    return objective == ConvObjective::CoRun ? "corun" : "alone";
}

ConvObjective conv_objective_from_string(const std::string& name) {
    if (name == "alone") return ConvObjective::Alone;
    if (name == "corun") return ConvObjective::CoRun;
    throw Error(fmt::format("unknown convolution objective '{}': use alone or corun", name));
}

ConvChoices conv_choices_for(const ConvChoices& choices, ConvObjective objective) {
    ConvChoices kept;
    for (const auto& [signature, choice] : choices)
        if (choice.objective == objective) kept.emplace(signature, choice);
    return kept;
}

ConvChoices timed_in_full(const ConvChoices& choices) {
    ConvChoices kept;
    for (const auto& [signature, choice] : choices)
        if (!choice.quick) kept.emplace(signature, choice);
    return kept;
}

ConvChoices combined_choices(const std::vector<ConvChoices>& parts, int* differing) {
    ConvChoices combined;
    int others = 0;
    for (const ConvChoices& part : parts)
        for (const auto& [signature, choice] : part) {
            const auto [it, added] = combined.emplace(signature, choice);
            others += !added && !same_kernel(it->second, choice);
        }
    if (differing) *differing = others;
    return combined;
}

bool same_kernel(const ConvChoice& a, const ConvChoice& b) {
    return a.algorithm == b.algorithm && a.math == b.math && a.path == b.path &&
           a.engine == b.engine;
}

std::vector<ConvChoice> runners_up(const std::vector<ConvChoice>& ran, const ConvChoice& chosen,
                                   size_t most) {
    std::vector<ConvChoice> by_time = ran;
    std::stable_sort(by_time.begin(), by_time.end(),
                     [](const ConvChoice& a, const ConvChoice& b) { return a.time_ms < b.time_ms; });
    std::vector<ConvChoice> next;
    for (const ConvChoice& c : by_time) {
        if (next.size() == most || c.time_ms > by_time.front().time_ms * (1 + kCoRunSlack))
            break;
        const auto same = [&](const ConvChoice& other) { return same_kernel(c, other); };
        if (same(chosen) || std::any_of(next.begin(), next.end(), same)) continue;
        next.push_back(c);
    }
    return next;
}

int gemm_algorithm_rank(const std::string& name) { return ranked_name(name, kGemmAlgorithmPrefix); }
int graph_algorithm_rank(const std::string& name) {
    return ranked_name(name, kGraphAlgorithmPrefix);
}

bool is_conv_algorithm_name(const std::string& name) {
    return contains(kAlgorithms, name) || gemm_algorithm_rank(name) >= 0 ||
           graph_algorithm_rank(name) >= 0;
}
bool is_conv_math_name(const std::string& name) { return contains(kMaths, name); }
bool is_conv_path_name(const std::string& name) { return contains(kPaths, name); }

nlohmann::json conv_choices_to_json(const ConvChoices& choices) {
    nlohmann::json json = nlohmann::json::object();
    for (const auto& [signature, c] : choices) {
        json[signature] = {{"algorithm", c.algorithm},
                           {"math", c.math},
                           {"path", c.path},
                           {"time_ms", c.time_ms}};
        if (c.objective != ConvObjective::Alone)
            json[signature]["objective"] = to_string(c.objective);
        if (c.quick) json[signature]["quick"] = true;
        if (!c.engine.empty()) json[signature]["engine"] = c.engine;
    }
    return json;
}

ConvChoices conv_choices_from_json(const nlohmann::json& json, const std::string& where) {
    if (!json.is_object())
        throw Error(fmt::format("{}: the convolution choices must be a JSON object, got {}", where,
                                json.type_name()));
    ConvChoices choices;
    for (const auto& [signature, entry] : json.items()) {
        const std::string context = fmt::format("{}: convolution choice '{}'", where, signature);
        if (!entry.is_object())
            throw Error(fmt::format("{} must be an object, got {}", context, entry.type_name()));
        auto text = [&](const char* field) {
            const auto it = entry.find(field);
            if (it == entry.end() || !it->is_string())
                throw Error(fmt::format("{} lacks the string field '{}'", context, field));
            return it->get<std::string>();
        };
        ConvChoice c;
        c.algorithm = text("algorithm");
        c.math = text("math");
        c.path = text("path");
        if (const auto it = entry.find("time_ms"); it != entry.end() && it->is_number())
            c.time_ms = it->get<double>();
        if (const auto it = entry.find("objective"); it != entry.end()) {
            if (!it->is_string() || (*it != "alone" && *it != "corun"))
                throw Error(fmt::format("{} has the objective {}: use \"alone\" or \"corun\"",
                                        context, it->dump()));
            c.objective = conv_objective_from_string(it->get<std::string>());
        }
        if (const auto it = entry.find("quick"); it != entry.end()) {
            if (!it->is_boolean())
                throw Error(fmt::format("{} has \"quick\": {}: use true or false", context,
                                        it->dump()));
            c.quick = it->get<bool>();
        }
        if (const auto it = entry.find("engine"); it != entry.end()) {
            if (!it->is_string() || graph_algorithm_rank(c.algorithm) < 0)
                throw Error(fmt::format("{} has \"engine\": {}: only a graph-API choice "
                                        "(GRAPH_<rank>) names its engine, as a string",
                                        context, it->dump()));
            c.engine = it->get<std::string>();
        }
        if (!is_conv_algorithm_name(c.algorithm))
            throw Error(fmt::format("{} names the unknown cuDNN algorithm '{}'", context, c.algorithm));
        if (!is_conv_math_name(c.math))
            throw Error(fmt::format("{} names the unknown math type '{}'", context, c.math));
        if (!is_conv_path_name(c.path))
            throw Error(fmt::format("{} names the unknown path '{}' (fused, conv+epilogue, conv, "
                                    "depthwise, gemm or graph)",
                                    context, c.path));
        choices.emplace(signature, std::move(c));
    }
    return choices;
}

}  // namespace iostune
