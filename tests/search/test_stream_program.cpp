// The stream program (src/stream_program.h): the launches, lanes and waits the engine runs, and
// the happens-before relation the memory plan and the concurrency audit rely on.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "search/baselines.h"
#include "src/error.h"
#include "src/schedule.h"
#include "src/stream_program.h"
#include "src/zoo/zoo.h"
#include "tests/search/search_fixtures.h"

using namespace iostune;
using iostune::test::conv;

namespace {

using S = Stage;
constexpr auto C = StageStrategy::Concurrent;

// Happens-before by brute force: reachability over the program's edges (each launch after the
// previous launch of its lane, and after every launch it waits for).
std::vector<std::vector<bool>> reachability(const StreamProgram& p) {
    const auto& launches = p.launches();
    const size_t n = launches.size();
    std::vector<std::vector<bool>> before(n, std::vector<bool>(n, false));
    std::vector<int> tail(size_t(p.lane_count()), -1);
    for (size_t b = 0; b < n; ++b) {
        std::vector<int> preds = launches[b].waits;
        if (tail[size_t(launches[b].lane)] >= 0) preds.push_back(tail[size_t(launches[b].lane)]);
        for (int a : preds) {
            before[size_t(a)][b] = true;
            for (size_t x = 0; x < n; ++x)
                if (before[x][size_t(a)]) before[x][b] = true;
        }
        tail[size_t(launches[b].lane)] = int(b);
    }
    return before;
}

// Two independent chains a1 -> a2 and b1 -> b2, staged as [[a1],[b1]] then [[a2],[b2]].
Graph two_chains() {
    Graph g("two_chains", Shape{1, 8, 8, 8});
    const int a1 = conv(g, kGraphInput, 8, 3, 3, 1, 1, "a1");
    const int b1 = conv(g, kGraphInput, 8, 3, 3, 1, 1, "b1");
    conv(g, a1, 8, 3, 3, 1, 1, "a2");
    conv(g, b1, 8, 3, 3, 1, 1, "b2");
    return g;
}

Schedule two_chains_schedule(ScheduleForm form) {
    Schedule s{{{S{C, {{0}, {1}}}, S{C, {{2}, {3}}}}}};
    s.form = form;
    return s;
}

}  // namespace

TEST_CASE("stream program: a staged schedule's stages are barriers", "[stream_program]") {
    const Graph g = two_chains();
    const StreamProgram p(g, two_chains_schedule(ScheduleForm::Staged));
    REQUIRE(p.launches().size() == 4);
    CHECK(p.lane_count() == 2);
    CHECK(p.may_overlap(p.launch_of(0), p.launch_of(1)));
    // Every op of stage 1 waits for every op of stage 0, data or not.
    for (int a : {0, 1})
        for (int b : {2, 3}) CHECK(p.happens_before(p.launch_of(a), p.launch_of(b)));
    CHECK(p.wait_count() == 2);  // a2 waits for b1, b2 for a1; same-lane order needs no event
}

TEST_CASE("stream program: dataflow keeps each chain on its lane with no wait",
          "[stream_program]") {
    const Graph g = two_chains();
    const StreamProgram p(g, two_chains_schedule(ScheduleForm::Dataflow));
    CHECK(p.wait_count() == 0);
    CHECK(p.launches()[size_t(p.launch_of(2))].lane == p.launches()[size_t(p.launch_of(0))].lane);
    CHECK(p.launches()[size_t(p.launch_of(3))].lane == p.launches()[size_t(p.launch_of(1))].lane);
    CHECK(p.happens_before(p.launch_of(0), p.launch_of(2)));
    CHECK(p.may_overlap(p.launch_of(0), p.launch_of(3)));  // a1 and b2: no data between them
    CHECK(p.may_overlap(p.launch_of(2), p.launch_of(3)));
}

TEST_CASE("stream program: a dataflow launch waits for a producer on another lane",
          "[stream_program]") {
    // x -> {p, q}; r reads p and q: [[p],[q]] then [[r]].
    Graph g("join", Shape{1, 8, 8, 8});
    const int p = conv(g, kGraphInput, 8, 1, 1, 0, 0, "p");
    const int q = conv(g, kGraphInput, 8, 1, 1, 0, 0, "q");
    g.add(OpKind::Add, AddAttrs{}, {p, q}, "r");
    Schedule s{{{S{C, {{0}, {1}}}, S{C, {{2}}}}}, ScheduleForm::Dataflow};
    const StreamProgram prog(g, s);
    CHECK(prog.wait_count() == 1);
    CHECK(prog.happens_before(prog.launch_of(0), prog.launch_of(2)));
    CHECK(prog.happens_before(prog.launch_of(1), prog.launch_of(2)));
    CHECK_THAT(prog.describe(g, prog.launch_of(2)), Catch::Contains("op 2 'r'"));
}

TEST_CASE("stream program: a dataflow barrier orders everything before it before everything "
          "after it, and nothing else",
          "[stream_program]") {
    // Three independent chains over three stages; a barrier before stage 2 only.
    Graph g("three_chains", Shape{1, 8, 8, 8});
    std::vector<int> tails;
    for (const char* name : {"a", "b", "c"}) tails.push_back(conv(g, kGraphInput, 8, 1, 1, 0, 0, name));
    for (int k = 0; k < 6; ++k)
        tails[size_t(k % 3)] = conv(g, tails[size_t(k % 3)], 8, 1, 1, 0, 0, "x" + std::to_string(k));
    // Stage 0: a, b, c; stage 1: x0, x1, x2; stage 2: x3, x4, x5 (one op per chain each).
    Schedule s{{{S{C, {{0}, {1}, {2}}}, S{C, {{3}, {4}, {5}}}, S{C, {{6}, {7}, {8}}}}},
               ScheduleForm::Dataflow, {2}};
    const StreamProgram p(g, s);
    const auto before = reachability(p);
    for (int a = 0; a < 9; ++a)
        for (int b = 0; b < 9; ++b) {
            const int la = p.launch_of(a), lb = p.launch_of(b);
            INFO("op " << a << " then op " << b);
            CHECK(p.happens_before(la, lb) == before[size_t(la)][size_t(lb)]);  // clocks agree
            const bool same_chain = a % 3 == b % 3 && a < b;
            const bool across = a < 6 && b >= 6;  // the barrier's two sides
            CHECK(p.happens_before(la, lb) == (same_chain || across));
        }
    CHECK(StreamProgram(g, with_form(s, ScheduleForm::Dataflow)).wait_count() == 0);
}

TEST_CASE("stream program: priorities choose a launch's level, not its lane or its waits",
          "[stream_program]") {
    const Graph g = two_chains();
    for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow}) {
        const Schedule plain = two_chains_schedule(form);
        Schedule urgent = plain;
        urgent.priorities = {2, 0, 1, 0};  // a1, b1, a2, b2
        const StreamProgram p(g, plain), q(g, urgent);
        REQUIRE(p.launches().size() == q.launches().size());
        for (size_t i = 0; i < p.launches().size(); ++i) {
            CHECK(p.launches()[i].priority == 0);
            CHECK(q.launches()[i].lane == p.launches()[i].lane);
            CHECK(q.launches()[i].waits == p.launches()[i].waits);
            CHECK(q.launches()[i].priority == urgent.priorities[size_t(q.launches()[i].ops[0])]);
        }
    }
    // A merge launch runs at the highest level of its ops.
    const Graph m = test::figure5();  // a(0) -> b(1); c(2): a and c merge
    Schedule merged{{{S{StageStrategy::Merge, {{0, 2}}}, S{C, {{1}}}}}};
    merged.priorities = {0, 0, 3};
    const StreamProgram pm(m, merged);
    CHECK(pm.launches()[size_t(pm.launch_of(0))].priority == 3);
    CHECK(pm.launches()[size_t(pm.launch_of(1))].priority == 0);
}

TEST_CASE("stream program: an invalid schedule is refused", "[stream_program]") {
    const Graph g = two_chains();
    Schedule bad{{{S{C, {{2}, {1}}}, S{C, {{0}, {3}}}}}, ScheduleForm::Dataflow};
    CHECK_THROWS_AS(StreamProgram(g, bad), Error);
}

TEST_CASE("stream program: on every zoo model and baseline, data is ordered, the vector clocks "
          "agree with reachability, and dataflow orders no more than staged",
          "[stream_program][zoo]") {
    for (const std::string model : {"googlenet", "inception_v3", "squeezenet1_1", "randwire"}) {
        const Graph g = build_zoo_model(model, 1);
        for (const char* name : {"sequential", "greedy", "nimble", "opara"}) {
            INFO(model << " " << name);
            const Schedule schedule = make_baseline(name, g);
            const StreamProgram staged(g, with_form(schedule, ScheduleForm::Staged));
            const StreamProgram dataflow(g, with_form(schedule, ScheduleForm::Dataflow));
            REQUIRE(staged.launches().size() == dataflow.launches().size());
            // A dataflow launch waits only for launches that produce what it reads.
            for (const Launch& l : dataflow.launches())
                for (int w : l.waits) {
                    bool feeds = false;
                    for (int id : l.ops)
                        for (int src : g.op(id).inputs)
                            feeds |= !is_graph_input(src) && dataflow.launch_of(src) == w;
                    CHECK(feeds);
                }
            for (const Op& op : g.ops())
                for (int src : op.inputs) {
                    if (is_graph_input(src)) continue;
                    for (const StreamProgram* p : {&staged, &dataflow}) {
                        const int a = p->launch_of(src), b = p->launch_of(op.id);
                        CHECK((a == b || p->happens_before(a, b)));
                    }
                }
            const auto staged_before = reachability(staged);
            const auto dataflow_before = reachability(dataflow);
            const int n = int(staged.launches().size());
            int mismatches = 0, wider = 0;
            for (int a = 0; a < n; ++a)
                for (int b = 0; b < n; ++b) {
                    mismatches += staged.happens_before(a, b) != staged_before[size_t(a)][size_t(b)];
                    mismatches +=
                        dataflow.happens_before(a, b) != dataflow_before[size_t(a)][size_t(b)];
                    wider += dataflow.happens_before(a, b) && !staged.happens_before(a, b);
                }
            CHECK(mismatches == 0);
            CHECK(wider == 0);
        }
    }
}
