// Where a stored schedule came from (db/schedule_origin.h), from search stats shaped as
// `iostune search` stores them (tuning_job.cpp: "refine" with its start and kept steps,
// "conv_objective" with the objective chosen, "baseline_of_schedule" on a contest's baseline row).
#include <catch2/catch.hpp>

#include "db/schedule_origin.h"

using iostune::db::OriginKind;
using iostune::db::schedule_origin;
using iostune::db::ScheduleRecord;

namespace {

// A row whose refinement started at `start`, kept `changes` moves, with kernels chosen by
// `objective` ("" leaves conv_objective out, as a simulated search does).
ScheduleRecord searched(const std::string& start, int changes, const std::string& objective) {
    ScheduleRecord row;
    nlohmann::json kept = nlohmann::json::array({{{"move", "start"}, {"ms", 1.0}}});
    for (int i = 0; i < changes; ++i) kept.push_back({{"move", "swap"}, {"ms", 0.9}});
    row.search_stats = {{"refine", {{"start", start}, {"kept", kept}}}};
    if (!objective.empty())
        row.search_stats["conv_objective"] = {{"chosen", objective}, {"alone", {{"ms", 1.0}}}};
    return row;
}

}  // namespace

TEST_CASE("a schedule's origin: the search's streams, a baseline's on its kernels, a baseline's",
          "[db][origin]") {
    SECTION("the DP's or asap's streams are the search's, changed or not") {
        const auto dp = schedule_origin(searched("ios-both (staged)", 0, "alone"));
        CHECK(dp.kind == OriginKind::Search);
        CHECK(origin_label(dp) == "search: ios-both (staged)");
        const auto asap = schedule_origin(searched("asap (dataflow)", 4, "mixed"));
        CHECK(asap.kind == OriginKind::Search);
        CHECK(asap.refine_changes == 4);
        CHECK(origin_label(asap) == "search: asap (dataflow) +4");
    }
    SECTION("a baseline's streams the refinement changed are the search's") {
        const auto o = schedule_origin(searched("greedy (dataflow)", 3, "alone"));
        CHECK(o.kind == OriginKind::Search);
        CHECK(origin_label(o) == "search: greedy (dataflow) +3");
    }
    SECTION("a baseline's streams unchanged: on kernels the search chose, or as they were") {
        const auto corun = schedule_origin(searched("nimble (dataflow)", 0, "corun"));
        CHECK(corun.kind == OriginKind::SearchKernels);
        CHECK(origin_label(corun) == "nimble (dataflow) streams, corun kernels");
        CHECK(schedule_origin(searched("nimble (dataflow)", 0, "mixed")).kind ==
              OriginKind::SearchKernels);
        const auto alone = schedule_origin(searched("nimble (dataflow)", 0, "alone"));
        CHECK(alone.kind == OriginKind::Baseline);
        CHECK(origin_label(alone) == "nimble (dataflow), unchanged");
        CHECK(schedule_origin(searched("sequential (staged)", 0, "")).kind == OriginKind::Baseline);
        CHECK(schedule_origin(searched("opara (dataflow)", 0, "alone")).kind ==
              OriginKind::Baseline);
    }
    SECTION("a baseline row the final contest stored, and rows without the stats") {
        ScheduleRecord contest;
        contest.strategy = "greedy";
        contest.search_stats = {{"baseline_of_schedule", 7}, {"simulated", false}};
        const auto o = schedule_origin(contest);
        CHECK(o.kind == OriginKind::Baseline);
        CHECK(o.final_contest);
        CHECK(origin_label(o) == "greedy, unchanged (final contest)");
        // It runs on the searched row's kernels, which its stats name since 2026-11-30.
        contest.search_stats["conv_objective"] = {{"chosen", "mixed"}};
        const auto moved = schedule_origin(contest);
        CHECK(moved.kind == OriginKind::SearchKernels);
        CHECK(origin_label(moved) == "greedy streams, mixed kernels (final contest)");
        ScheduleRecord old;
        old.search_stats = {{"search_seconds", 3.0}};
        CHECK(schedule_origin(old).kind == OriginKind::Unknown);
        CHECK(origin_label(schedule_origin(old)) == "-");
        ScheduleRecord no_steps;
        no_steps.search_stats = {{"refine", {{"start", "greedy (staged)"}}}};
        CHECK(schedule_origin(no_steps).kind == OriginKind::Unknown);
    }
    SECTION("its JSON names every field, null where not recorded") {
        const nlohmann::json j = origin_json(schedule_origin(searched("nimble (dataflow)", 0, "corun")));
        CHECK(j["kind"] == "search_kernels");
        CHECK(j["refined_from"] == "nimble (dataflow)");
        CHECK(j["refine_changes"] == 0);
        CHECK(j["conv_objective"] == "corun");
        CHECK(j["baseline"] == "nimble (dataflow)");
        CHECK(j["final_contest"] == false);
        const nlohmann::json unknown = origin_json(schedule_origin(ScheduleRecord{}));
        CHECK(unknown["kind"] == "unknown");
        CHECK(unknown["refined_from"].is_null());
        CHECK(unknown["refine_changes"].is_null());
        CHECK(unknown["conv_objective"].is_null());
        CHECK(unknown["baseline"].is_null());
    }
}
