#include "tuning/schedule_contest.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "src/error.h"

namespace iostune {

size_t fastest_entry(const std::vector<ContestEntry>& entries) {
    std::vector<size_t> all(entries.size());
    std::iota(all.begin(), all.end(), size_t(0));
    return fastest_entry(entries, all);
}

std::vector<size_t> close_contest_entrants(const std::vector<ContestEntry>& entries,
                                           double close) {
    if (entries.empty()) return {};
    const size_t best = fastest_entry(entries);
    const double searched_ms = entries[0].median_ms;
    if (best == 0 || searched_ms > entries[best].median_ms * (1 + close)) return {};
    std::vector<size_t> entrants = {0};
    for (size_t i = 1; i < entries.size(); ++i)
        if (entries[i].median_ms < searched_ms) entrants.push_back(i);
    return entrants;
}

size_t fastest_entry(const std::vector<ContestEntry>& entries, const std::vector<size_t>& among) {
    std::optional<size_t> best;
    for (const size_t i : among) {
        if (i >= entries.size())
            throw Error(fmt::format("contest entry {} of {} does not exist", i, entries.size()));
        if (!best || entries[i].median_ms < entries[*best].median_ms ||
            (entries[i].median_ms == entries[*best].median_ms && i < *best))
            best = i;
    }
    if (!best) throw Error("no schedules were timed end to end; nothing to choose from");
    return *best;
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
