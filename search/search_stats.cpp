#include "search/search_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <array>

namespace iostune {

namespace {

constexpr double kExactLimit = 9007199254740992.0;  // 2^53: doubles hold every integer below

// Beyond a double's range (NASNet's product over blocks) the count is shown as a bound, not null.
constexpr const char* kBeyondDouble = "> 1.8e308";

nlohmann::json count_to_json(double count) {
    if (!std::isfinite(count)) return kBeyondDouble;
    if (count < kExactLimit) return uint64_t(count);
    return count;
}

nlohmann::json row_to_json(const BlockSearchStats& row) {
    return {{"block", row.block},
            {"parts", row.parts},
            {"parts_out_of_time", row.parts_out_of_time},
            {"ops", row.ops},
            {"width", row.width},
            {"states", row.states},
            {"transitions", row.transitions},
            {"schedules", count_to_json(row.schedules)},
            {"stages_costed", row.stages_costed},
            {"cache_hits", row.cache_hits},
            {"stages_failed", row.stages_failed},
            {"latency_ms", row.latency_ms},
            {"wall_s", row.wall_s}};
}

}  // namespace

BlockSearchStats SearchStats::totals() const {
    BlockSearchStats total;
    total.block = -1;
    total.parts = 0;
    for (const auto& row : blocks) {
        total.parts += row.parts;
        total.parts_out_of_time += row.parts_out_of_time;
        total.ops += row.ops;
        total.width = std::max(total.width, row.width);
        total.states += row.states;
        total.transitions += row.transitions;
        total.schedules *= row.schedules;
        total.stages_costed += row.stages_costed;
        total.cache_hits += row.cache_hits;
        total.stages_failed += row.stages_failed;
        total.latency_ms += row.latency_ms;
        total.wall_s += row.wall_s;
    }
    return total;
}

std::string format_count(double count) {
    if (!std::isfinite(count)) return kBeyondDouble;
    if (count < kExactLimit) return fmt::format("{}", uint64_t(count));
    return fmt::format("{:.3g}", count);
}

std::string format_stats_table(const SearchStats& stats) {
    using Row = std::array<std::string, 12>;
    const Row header{"block", "parts", "ops", "width", "states", "transitions", "schedules",
                     "costed", "cache hits", "failed", "latency ms", "time s"};
    auto cells = [](const std::string& name, const BlockSearchStats& r) {
        return Row{name,
                   fmt::format("{}", r.parts),
                   fmt::format("{}", r.ops),
                   fmt::format("{}", r.width),
                   fmt::format("{}", r.states),
                   fmt::format("{}", r.transitions),
                   format_count(r.schedules),
                   fmt::format("{}", r.stages_costed),
                   fmt::format("{}", r.cache_hits),
                   fmt::format("{}", r.stages_failed),
                   fmt::format("{:.4f}", r.latency_ms),
                   fmt::format("{:.3f}", r.wall_s)};
    };
    std::vector<Row> rows{header};
    for (const auto& r : stats.blocks) rows.push_back(cells(fmt::format("{}", r.block), r));
    rows.push_back(cells("total", stats.totals()));

    std::array<size_t, 12> widths{};
    for (const auto& row : rows)
        for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    std::string text;
    for (size_t r = 0; r < rows.size(); ++r) {
        if (r + 1 == rows.size()) {  // rule above the total
            size_t len = 0;
            for (size_t w : widths) len += w + 2;
            text += std::string(len - 2, '-') + "\n";
        }
        for (size_t i = 0; i < rows[r].size(); ++i) {
            // Names left-aligned, numbers right-aligned.
            text += i == 0 ? fmt::format("{:<{}}", rows[r][i], widths[i])
                           : fmt::format("  {:>{}}", rows[r][i], widths[i]);
        }
        text += "\n";
    }
    return text;
}

nlohmann::json stats_to_json(const SearchStats& stats) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& row : stats.blocks) blocks.push_back(row_to_json(row));
    nlohmann::json totals = row_to_json(stats.totals());
    totals.erase("block");
    return {{"blocks", std::move(blocks)}, {"totals", std::move(totals)}};
}

}  // namespace iostune
