#include "tuning/schedule_contest.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"

namespace iostune {

size_t fastest_entry(const std::vector<ContestEntry>& entries) {
    if (entries.empty()) throw Error("no schedules were timed end to end; nothing to choose from");
    size_t best = 0;
    for (size_t i = 1; i < entries.size(); ++i)
        if (entries[i].median_ms < entries[best].median_ms) best = i;
    return best;
}

std::vector<std::string> contender_list(const std::vector<std::string>& names) {
    static const std::vector<std::string> known = {"greedy", "nimble", "opara"};
    std::vector<std::string> list;
    for (const std::string& name : names) {
        if (name == "none") {
            if (names.size() != 1)
                throw Error("--contenders: 'none' cannot be combined with baseline names");
            continue;
        }
        if (name == "sequential") continue;  // always timed
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw Error(fmt::format(
                "--contenders: unknown baseline '{}'; use a comma-separated list of greedy, "
                "nimble and opara, or none",
                name));
        if (std::find(list.begin(), list.end(), name) != list.end())
            throw Error(fmt::format("--contenders: '{}' is listed twice", name));
        list.push_back(name);
    }
    return list;
}

}  // namespace iostune
