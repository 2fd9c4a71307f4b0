#include "src/zoo/zoo.h"

#include <fmt/format.h>

#include <functional>
#include <utility>

#include "src/error.h"

namespace iostune {

namespace {

constexpr unsigned kDefaultRandWireSeed = 1;
constexpr const char* kRandWirePrefix = "randwire_seed";

// "randwire" means randwire_seed1; "randwire_seedN" picks the Watts-Strogatz seed N.
std::optional<unsigned> randwire_seed(const std::string& name) {
    if (name == "randwire") return kDefaultRandWireSeed;
    const std::string prefix = kRandWirePrefix;
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() || name.size() > prefix.size() + 9)
        return std::nullopt;
    unsigned seed = 0;
    for (char ch : name.substr(prefix.size())) {
        if (ch < '0' || ch > '9') return std::nullopt;
        seed = seed * 10 + unsigned(ch - '0');
    }
    return seed;
}

const std::vector<std::pair<std::string, std::function<Graph(int)>>>& builders() {
    static const std::vector<std::pair<std::string, std::function<Graph(int)>>> table{
        {"inception_v3", build_inception_v3},
        {"googlenet", build_googlenet},
        {"squeezenet1_1", build_squeezenet1_1},
        {"resnet50", build_resnet50},
        {"nasnet_a_large", build_nasnet_a_large},
        {"randwire", [](int batch) { return build_randwire(batch, kDefaultRandWireSeed); }},
    };
    return table;
}

}  // namespace

std::vector<std::string> zoo_model_names() {
    std::vector<std::string> names;
    for (const auto& [name, build] : builders()) names.push_back(name);
    return names;
}

bool is_zoo_model(const std::string& name) {
    for (const auto& [known, build] : builders())
        if (known == name) return true;
    return randwire_seed(name).has_value();
}

Graph build_zoo_model(const std::string& name, int batch) {
    if (batch <= 0) throw Error(fmt::format("batch size must be positive, got {}", batch));
    if (auto seed = randwire_seed(name); seed && name != "randwire") {
        Graph g = build_randwire(batch, *seed);
        g.set_name(name);
        return g;
    }
    for (const auto& [known, build] : builders())
        if (known == name) return build(batch);
    throw Error(fmt::format("unknown model '{}'; the zoo has: {} (or randwire_seedN), or pass a "
                            "model file (.json)",
                            name, fmt::join(zoo_model_names(), ", ")));
}

}  // namespace iostune
