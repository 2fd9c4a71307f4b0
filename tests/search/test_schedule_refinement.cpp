// The measured refinement (search/schedule_refinement.h), the simulated timeline it is judged by
// without a GPU (search/timeline_sim.h), and the DP's time budget (search/ios_search.h).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <chrono>
#include <set>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include "search/baselines.h"
#include "search/critical_priorities.h"
#include "search/ios_search.h"
#include "search/schedule_refinement.h"
#include "search/sim_cost_model.h"
#include "search/timeline_sim.h"
#include "src/error.h"
#include "src/memory_fit.h"
#include "src/schedule.h"
#include "src/stream_program.h"
#include "src/zoo/zoo.h"
#include "tests/search/search_fixtures.h"

using namespace iostune;
using iostune::test::conv;

namespace {

double timeline_ms(const Graph& g, const Schedule& s) {
    return simulate_program_ms(g, StreamProgram(g, s), SimCostModel());
}

// `width` independent chains of three 3x3 convolutions between one input and one concat: one
// block of 3 * width + 1 ops whose every state has many endings.
Graph wide_block(int width) {
    Graph g("wide", Shape{1, 32, 28, 28});
    std::vector<int> ends;
    for (int b = 0; b < width; ++b) {
        int x = kGraphInput;
        for (int k = 0; k < 3; ++k) x = conv(g, x, 32, 3, 3, 1, 1, fmt::format("b{}_{}", b, k));
        ends.push_back(x);
    }
    g.add(OpKind::Concat, ConcatAttrs{}, ends, "concat");
    return g;
}

// The evaluators below bend what the simulated timeline says: each measures on `sim_`, and
// says under its name whether it stands for an estimate or a GPU (`simulated()`).
class OnTimeline : public ScheduleEvaluator {
public:
    OnTimeline(const Graph& g, std::string name, bool simulated)
        : sim_(g, SimCostModel()), name_(std::move(name)), simulated_(simulated) {}
    ScheduleMeasurement measure(const Schedule& s) override {
        ScheduleMeasurement m = sim_.measure(s);
        m.simulated = simulated_;
        return m;
    }
    std::string name() const override { return name_; }
    bool simulated() const override { return simulated_; }

private:
    SimulatedScheduleEvaluator sim_;
    std::string name_;
    bool simulated_;
};

std::vector<RefineCandidate> baseline_candidates(const Graph& g) {
    return {{"greedy", make_baseline("greedy", g)},
            {"nimble", make_baseline("nimble", g)},
            {"sequential", sequential_schedule(g)}};
}

}  // namespace

TEST_CASE("timeline: dataflow is never slower than staged, and concurrency beats a chain",
          "[refine][timeline]") {
    for (const std::string model : {"googlenet", "inception_v3", "randwire"}) {
        INFO(model);
        const Graph g = build_zoo_model(model, 1);
        for (const std::string name : {"greedy", "nimble"}) {
            const Schedule s = make_baseline(name, g);
            const double staged = timeline_ms(g, with_form(s, ScheduleForm::Staged));
            const double dataflow = timeline_ms(g, with_form(s, ScheduleForm::Dataflow));
            CHECK(dataflow <= staged * (1 + 1e-9));
            CHECK(staged < timeline_ms(g, sequential_schedule(g)));
        }
        // Deterministic: the same schedule, the same estimate.
        CHECK(timeline_ms(g, make_baseline("greedy", g)) ==
              timeline_ms(g, make_baseline("greedy", g)));
    }
}

TEST_CASE("refinement: every random move keeps the schedule valid", "[refine]") {
    for (const std::string model : {"inception_v3", "nasnet_a_large", "squeezenet1_1"}) {
        INFO(model);
        const Graph g = build_zoo_model(model, 1);
        Schedule s = make_baseline("greedy", g);
        uint64_t rng = 42;
        int changed = 0;
        for (int i = 0; i < 1500; ++i) {
            std::string move;
            Schedule next = random_move(g, s, rng, move);
            REQUIRE_NOTHROW(validate(g, next));
            changed += !(next == s);
            s = std::move(next);
        }
        CHECK(changed > 300);  // a good share of moves find a place to apply
    }
}

TEST_CASE("refinement never returns a schedule slower than its best candidate (simulated)",
          "[refine]") {
    for (const std::string model : {"googlenet", "inception_v3", "squeezenet1_1", "randwire"}) {
        INFO(model);
        const Graph g = build_zoo_model(model, 1);
        SimulatedScheduleEvaluator evaluator(g, SimCostModel());
        RefineOptions options;
        options.max_evaluations = 150;
        options.time_budget_s = 1e9;
        const RefineResult r = refine_schedule(g, baseline_candidates(g), evaluator, options);
        double best_candidate = 1e300;
        for (const CandidateTiming& c : r.candidates)
            best_candidate = std::min(best_candidate, c.latency_ms);
        CHECK(r.candidates.size() >= 4);
        CHECK(r.latency_ms <= best_candidate);
        CHECK(r.latency_ms == Approx(evaluator.measure(r.schedule).latency_ms));
        CHECK(r.evaluations <= options.max_evaluations);
        REQUIRE_NOTHROW(validate(g, r.schedule));
        // Every kept change improved on the one before.
        for (size_t k = 1; k < r.kept.size(); ++k) CHECK(r.kept[k].latency_ms < r.kept[k - 1].latency_ms);
    }
}

TEST_CASE("refinement: what on_start changes (the kernels) is timed on the start again, and every "
          "change is judged on it",
          "[refine]") {
    const Graph g = build_zoo_model("googlenet", 1);
    // The simulated latency scaled by what runs: on_start makes every schedule 20% faster.
    class Scaled final : public OnTimeline {
    public:
        explicit Scaled(const Graph& graph) : OnTimeline(graph, "scaled", true) {}
        ScheduleMeasurement measure(const Schedule& s) override {
            ScheduleMeasurement m = OnTimeline::measure(s);
            m.latency_ms *= scale;
            return m;
        }
        double scale = 1.0;
    } evaluator(g);
    RefineOptions options;
    options.max_evaluations = 100;
    options.time_budget_s = 1e9;
    int calls = 0;
    Schedule seen_start;
    options.on_start = [&](const Schedule& start) {
        ++calls;
        seen_start = start;
        evaluator.scale = 0.8;
        return true;
    };
    const RefineResult r = refine_schedule(g, baseline_candidates(g), evaluator, options);
    CHECK(calls == 1);
    double best_candidate = 1e300;
    for (const CandidateTiming& c : r.candidates)
        best_candidate = std::min(best_candidate, c.latency_ms);
    CHECK(r.start_before_on_start_ms == Approx(best_candidate));
    REQUIRE(!r.kept.empty());
    CHECK(r.kept.front().latency_ms == Approx(0.8 * best_candidate));  // the start, timed again
    CHECK(evaluator.measure(seen_start).latency_ms == Approx(r.kept.front().latency_ms));
    CHECK(r.latency_ms <= r.kept.front().latency_ms);
    CHECK(r.latency_ms == Approx(evaluator.measure(r.schedule).latency_ms));

    // Nothing changed: nothing timed again.
    evaluator.scale = 1.0;
    options.on_start = [](const Schedule&) { return false; };
    const RefineResult same = refine_schedule(g, baseline_candidates(g), evaluator, options);
    CHECK(same.start_before_on_start_ms == 0);
    CHECK(same.kept.front().latency_ms == Approx(best_candidate));
}

TEST_CASE("refinement with a memory limit: everything it times and keeps fits", "[refine][memory]") {
    const Graph g = build_zoo_model("randwire", 1);
    MemoryPlanOptions plan;
    plan.layout = TensorLayout::Nhwc;
    const MemoryFitter fitter(g, plan, 1.3);
    // An evaluator that sees every schedule the refinement times.
    class Watching final : public OnTimeline {
    public:
        Watching(const Graph& g, const MemoryFitter& f)
            : OnTimeline(g, "watching", true), fitter_(f) {}
        ScheduleMeasurement measure(const Schedule& s) override {
            over_limit += fitter_.arena_bytes(s) > fitter_.limit_bytes();
            ++timed;
            return OnTimeline::measure(s);
        }
        int timed = 0, over_limit = 0;

    private:
        const MemoryFitter& fitter_;
    } evaluator(g, fitter);
    RefineOptions options;
    options.max_evaluations = 60;
    options.time_budget_s = 1e9;
    options.fit = [&](const Schedule& s) { return fitter.fit(s); };
    const RefineResult r = refine_schedule(g, baseline_candidates(g), evaluator, options);
    CHECK(evaluator.timed > 10);
    CHECK(evaluator.over_limit == 0);
    CHECK(fitter.arena_bytes(r.schedule) <= fitter.limit_bytes());
    CHECK(fitter.fit(r.schedule) == r.schedule);
}

TEST_CASE("refinement: a measured gain that does not hold when timed again is not kept",
          "[refine]") {
    const Graph g = build_zoo_model("googlenet", 1);
    // A measured evaluator whose first timing of every schedule after the candidates is lucky
    // (10% low), later ones the simulated truth: noise no move truly beats.
    class Lucky final : public OnTimeline {
    public:
        explicit Lucky(const Graph& g) : OnTimeline(g, "lucky", false) {}
        ScheduleMeasurement measure(const Schedule& s) override {
            ScheduleMeasurement m = OnTimeline::measure(s);
            if (++timed > candidates && seen.insert(schedule_to_json(s).dump()).second)
                m.latency_ms *= 0.9;
            return m;
        }
        // Timed in turns (the start's contest, a gain's confirmation): the truth.
        std::vector<ScheduleMeasurement> measure_in_turns(
            const std::vector<Schedule>& schedules) override {
            std::vector<ScheduleMeasurement> out;
            for (const Schedule& s : schedules) out.push_back(OnTimeline::measure(s));
            return out;
        }
        int timed = 0, candidates = 6;  // three candidates in both forms: timed truly
        std::set<std::string> seen;
    };
    RefineOptions options;
    options.max_evaluations = 80;
    options.time_budget_s = 1e9;
    options.recombine_blocks = false;
    SimulatedScheduleEvaluator truth(g, SimCostModel());
    for (const bool confirm : {true, false}) {
        INFO("confirm " << confirm);
        options.confirm_gains = confirm;
        Lucky lucky(g);
        const RefineResult r = refine_schedule(g, baseline_candidates(g), lucky, options);
        const double true_ms = truth.measure(r.schedule).latency_ms;
        if (confirm) {
            // What it reports is what the schedule takes: every kept gain was real.
            CHECK(r.latency_ms == Approx(true_ms));
            for (size_t k = 1; k < r.kept.size(); ++k)
                CHECK(r.kept[k].latency_ms < r.kept[k - 1].latency_ms);
            // The lucky first timings show as near misses: faster at first, not again.
            CHECK(r.unconfirmed > 0);
            CHECK(r.unconfirmed <= r.moves_timed);
            CHECK(r.least_move_ratio < 1 - options.min_gain);
        } else {
            CHECK(r.unconfirmed == 0);
            // Unconfirmed, luck is kept and reported: optimistic by the luck.
            REQUIRE(r.kept.size() > 1);
            CHECK(r.latency_ms < 0.95 * true_ms);
        }
    }
}

TEST_CASE("refinement: on a GPU the start is the fastest of the near candidates timed in turns",
          "[refine]") {
    const Graph g = build_zoo_model("googlenet", 1);
    // The favoured schedule (in either form) takes 2% more than the simulated timeline in truth,
    // which timings in turns see; one at a time a drift of the clocks makes it time 2% less.
    class Drifting final : public OnTimeline {
    public:
        Drifting(const Graph& g, const Schedule& favoured) : OnTimeline(g, "drifting", false) {
            for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow})
                favoured_.insert(schedule_to_json(with_form(favoured, form)).dump());
        }
        double truth(const Schedule& s) {
            const double ms = OnTimeline::measure(s).latency_ms;
            return favoured_.count(schedule_to_json(s).dump()) > 0 ? 1.02 * ms : ms;
        }
        ScheduleMeasurement measure(const Schedule& s) override {
            ScheduleMeasurement m = OnTimeline::measure(s);
            if (favoured_.count(schedule_to_json(s).dump()) > 0) m.latency_ms *= 0.98;
            return m;
        }
        std::vector<ScheduleMeasurement> measure_in_turns(
            const std::vector<Schedule>& schedules) override {
            ++contests;
            contestants = schedules.size();
            std::vector<ScheduleMeasurement> out(schedules.size());
            for (size_t k = 0; k < schedules.size(); ++k) out[k].latency_ms = truth(schedules[k]);
            return out;
        }
        int contests = 0;
        size_t contestants = 0;

    private:
        std::set<std::string> favoured_;
    };
    // Greedy's and nimble's schedules of GoogLeNet tie on the simulated timeline; nimble's is
    // favoured one at a time, greedy's is faster in truth.
    const Schedule nimble = make_baseline("nimble", g), greedy = make_baseline("greedy", g);
    Drifting drifting(g, nimble);
    RefineOptions options;
    options.max_evaluations = 0;  // the start only
    options.recombine_blocks = false;
    const std::vector<RefineCandidate> candidates = {{"greedy", greedy}, {"nimble", nimble}};
    const RefineResult r = refine_schedule(g, candidates, drifting, options);
    CHECK(drifting.contests == 1);
    CHECK(drifting.contestants >= 2);
    CHECK(r.start_contest.size() == drifting.contestants);
    CHECK(r.start.rfind("greedy", 0) == 0);
    CHECK(r.latency_ms == Approx(drifting.truth(r.schedule)));
    // Ranked by their first timings, the favoured one first, which lost in turns.
    REQUIRE(!r.start_contest.empty());
    CHECK(r.start_contest.front().label.rfind("nimble", 0) == 0);
    CHECK(r.start_contest.front().first_ms < r.start_contest.front().in_turns_ms);

    // Simulated, there is no contest: the estimate is exact.
    SimulatedScheduleEvaluator simulated(g, SimCostModel());
    CHECK(refine_schedule(g, candidates, simulated, options).start_contest.empty());
}

TEST_CASE("refinement: what it times before any move is what refine_first_timings counts",
          "[refine]") {
    // The tuning job sizes the evaluator's repeats by this count (a big model's first timings
    // overran the refinement's time, then the budget's: call167).
    const Graph g = build_zoo_model("googlenet", 1);
    class Counting final : public OnTimeline {
    public:
        explicit Counting(const Graph& g) : OnTimeline(g, "counting", false) {}
        ScheduleMeasurement measure(const Schedule& s) override {
            ++plain;
            return OnTimeline::measure(s);
        }
        std::vector<ScheduleMeasurement> measure_in_turns(
            const std::vector<Schedule>& schedules) override {
            in_turns += int(schedules.size());
            std::vector<ScheduleMeasurement> out;
            for (const Schedule& s : schedules) out.push_back(OnTimeline::measure(s));
            return out;
        }
        int plain = 0, in_turns = 0;
    };
    RefineOptions options;
    options.max_evaluations = 0;  // the start only
    options.recombine_blocks = false;
    std::vector<RefineCandidate> candidates = baseline_candidates(g);
    candidates.back().only_form = ScheduleForm::Staged;  // as the tuning job's sequential
    const RefineFirstTimings first = refine_first_timings(candidates);
    CHECK(first.plain == 2 + 2 + 1 + 1);
    CHECK(first.in_turns == int(kStartContestSize));
    Counting counting(g);
    const RefineResult r = refine_schedule(g, candidates, counting, options);
    REQUIRE(!r.start_contest.empty());
    CHECK(counting.plain == first.plain);
    CHECK(counting.in_turns <= first.in_turns);
    CHECK(counting.in_turns == int(r.start_contest.size()));

    // One candidate in one form: no contest, that timing and one more at most.
    const RefineFirstTimings alone = refine_first_timings({candidates.back()});
    CHECK(alone.plain == 2);
    CHECK(alone.in_turns == 0);
}

TEST_CASE("refinement: the priority trial is made only when it fits the time left at what the "
          "start's contest took a schedule",
          "[refine]") {
    const Graph g = build_zoo_model("googlenet", 1);
    // The start's contest takes 0.5 s whatever its size; the rest takes no time.
    class SlowContest final : public OnTimeline {
    public:
        explicit SlowContest(const Graph& g) : OnTimeline(g, "slow contest", false) {}
        std::vector<ScheduleMeasurement> measure_in_turns(
            const std::vector<Schedule>& schedules) override {
            if (calls++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
            return OnTimeline::measure_in_turns(schedules);
        }
        int calls = 0;
    };
    std::vector<double> ms(size_t(g.size()), 0.01);
    const std::vector<int> critical = critical_priorities(g, ms, {0.02});
    RefineOptions options;
    options.max_evaluations = 14;  // past the contest and the trial, a move or so
    options.recombine_blocks = false;
    options.priority_variants = [&](const Schedule&) {
        return std::vector<PriorityVariant>{{"critical", critical}, {"graded", critical}};
    };
    const std::vector<RefineCandidate> candidates = baseline_candidates(g);
    // Three schedules at 0.125-0.25 s each (the contest had two to four) past the 0.5 s spent
    // overrun 0.8 s: no trial, the start timed once more instead.
    options.time_budget_s = 0.8;
    SlowContest tight(g);
    const RefineResult skipped = refine_schedule(g, candidates, tight, options);
    REQUIRE(skipped.start_contest.size() >= 2);
    CHECK(skipped.priority_trial_out_of_time);
    CHECK(skipped.priority_trial.empty());
    // With time for it, the trial is made.
    options.time_budget_s = 30;
    SlowContest ample(g);
    const RefineResult made = refine_schedule(g, candidates, ample, options);
    CHECK_FALSE(made.priority_trial_out_of_time);
    CHECK(made.priority_trial.size() == 3);
}

TEST_CASE("refinement: the start's time is one made after the contest chose it, not the contest's "
          "least",
          "[refine]") {
    const Graph g = build_zoo_model("googlenet", 1);
    // The contest's timings in turns run 5% low (the least of noisy timings); every timing after
    // it is the simulated timeline's.
    class LuckyContest final : public OnTimeline {
    public:
        explicit LuckyContest(const Graph& graph) : OnTimeline(graph, "lucky contest", false) {}
        std::vector<ScheduleMeasurement> measure_in_turns(
            const std::vector<Schedule>& schedules) override {
            std::vector<ScheduleMeasurement> out = OnTimeline::measure_in_turns(schedules);
            if (contests++ == 0)
                for (ScheduleMeasurement& m : out) m.latency_ms *= 0.95;
            return out;
        }
        int contests = 0;
    };
    RefineOptions options;
    options.max_evaluations = 0;  // the start only
    options.recombine_blocks = false;
    int before_moves = 0;
    for (const bool trial : {false, true}) {
        INFO((trial ? "timed again by the priority trial" : "timed again on its own"));
        LuckyContest evaluator(g);
        if (trial) {
            // Levels the timeline ignores: "none" ties with them, and none is kept. The trial
            // runs while evaluations are left, the moves after it do not (the run without a
            // trial made its one timing again where the trial now starts).
            options.priority_variants = [&](const Schedule&) {
                return std::vector<PriorityVariant>{
                    {"all raised", std::vector<int>(size_t(g.size()), 1)}};
            };
            options.max_evaluations = before_moves;
        }
        const RefineResult r = refine_schedule(g, baseline_candidates(g), evaluator, options);
        REQUIRE(!r.start_contest.empty());
        const double truth = OnTimeline(g, "truth", false).measure(r.schedule).latency_ms;
        CHECK(r.kept.front().latency_ms == Approx(0.95 * truth));  // the contest's
        CHECK(r.latency_ms == Approx(truth));
        CHECK(r.priority_trial.empty() == !trial);
        CHECK(r.kept.size() == 1);
        before_moves = r.evaluations;
    }
}

TEST_CASE("refinement: when on_start changed the kernels, the start contest's rivals are timed "
          "again and a faster one becomes the result",
          "[refine]") {
    const Graph g = build_zoo_model("googlenet", 1);
    const Schedule a = with_form(make_baseline("greedy", g), ScheduleForm::Staged);
    const Schedule b = with_form(make_baseline("nimble", g), ScheduleForm::Dataflow);
    // Fixed times: a 1.00 ms, b 1.02 (near it, so a rival), anything else (a move) 1.5; once
    // the kernels changed (on_start), b takes `b_after`.
    class Fixed final : public ScheduleEvaluator {
    public:
        Fixed(const Schedule& a, const Schedule& b)
            : a_(schedule_to_json(a).dump()), b_(schedule_to_json(b).dump()) {}
        ScheduleMeasurement measure(const Schedule& s) override {
            const std::string json = schedule_to_json(s).dump();
            ScheduleMeasurement m;
            m.latency_ms = json == a_ ? 1.0 : json == b_ ? (kernels_changed ? b_after : 1.02) : 1.5;
            return m;
        }
        std::string name() const override { return "fixed"; }
        bool simulated() const override { return false; }
        bool kernels_changed = false;
        double b_after = 1.02;

    private:
        std::string a_, b_;
    } evaluator(a, b);
    const std::vector<RefineCandidate> candidates = {{"a", a, ScheduleForm::Staged},
                                                     {"b", b, ScheduleForm::Dataflow}};
    RefineOptions options;
    options.max_evaluations = 20;
    options.recombine_blocks = false;
    options.on_start = [&](const Schedule&) { return evaluator.kernels_changed = true; };

    // The kernels chosen on a run b faster by 8%: b is the result, as a start of its own.
    evaluator.b_after = 0.92;
    const RefineResult won = refine_schedule(g, candidates, evaluator, options);
    CHECK(won.start == "b (dataflow)");
    CHECK(schedule_to_json(won.schedule) == schedule_to_json(b));
    CHECK(won.latency_ms == Approx(0.92));
    REQUIRE(won.kept.size() == 1);
    CHECK(won.kept.front().move.rfind("start b (dataflow) (timed again on the kernels chosen on a "
                                      "(staged))", 0) == 0);
    REQUIRE(won.rival_check.size() == 2);
    CHECK(won.rival_check[0].label == "result");
    CHECK(won.rival_check[0].latency_ms == Approx(1.0));
    CHECK(won.rival_check[1].label == "b (dataflow)");

    // Within the margin: the result stays, and the check is recorded.
    evaluator.kernels_changed = false;
    evaluator.b_after = 0.999;
    const RefineResult kept = refine_schedule(g, candidates, evaluator, options);
    CHECK(kept.start == "a (staged)");
    CHECK(schedule_to_json(kept.schedule) == schedule_to_json(a));
    CHECK(kept.rival_check.size() == 2);

    // Nothing changed what runs: no rival is timed again.
    evaluator.kernels_changed = false;
    evaluator.b_after = 0.5;
    options.on_start = [](const Schedule&) { return false; };
    const RefineResult unchanged = refine_schedule(g, candidates, evaluator, options);
    CHECK(unchanged.start == "a (staged)");
    CHECK(unchanged.rival_check.empty());
}

TEST_CASE("refinement: the priority levels that time faster in turns are kept, and moves keep "
          "them; levels that change nothing are not",
          "[refine]") {
    const Graph g = build_zoo_model("googlenet", 1);
    std::vector<double> ms(size_t(g.size()), 0.0);
    for (int id = 0; id < g.size(); ++id) ms[size_t(id)] = 0.01 + 0.001 * double(id % 5);
    const std::vector<int> critical = critical_priorities(g, ms, {0.02});
    const std::vector<int> graded = critical_priorities(g, ms, {0.25, 0.1, 0.02});
    // A GPU on which the graded levels take 4% off and the critical ones 2%; `fading`: only
    // until the trial has timed them (the moves after it undo what they gained).
    class Prioritised final : public OnTimeline {
    public:
        Prioritised(const Graph& graph, std::vector<int> levels, double gain, bool fading = false)
            : OnTimeline(graph, "prioritised", false),
              graded_(std::move(levels)),
              gain_(gain),
              fading_(fading) {}
        ScheduleMeasurement measure(const Schedule& s) override {
            ScheduleMeasurement m = OnTimeline::measure(s);
            if (!s.priorities.empty() && !faded_)
                m.latency_ms *= 1 - (s.priorities == graded_ ? gain_ : gain_ / 2);
            return m;
        }
        std::vector<ScheduleMeasurement> measure_in_turns(
            const std::vector<Schedule>& schedules) override {
            std::vector<ScheduleMeasurement> timed = OnTimeline::measure_in_turns(schedules);
            bool levels = false;
            for (const Schedule& s : schedules) levels = levels || !s.priorities.empty();
            if (levels && fading_) faded_ = true;
            return timed;
        }

    private:
        std::vector<int> graded_;
        double gain_;
        bool fading_, faded_ = false;
    };
    RefineOptions options;
    options.max_evaluations = 60;
    int trials = 0;
    Schedule tried;  // the start the trial was given
    options.priority_variants = [&](const Schedule& start) {
        ++trials;
        tried = start;
        CHECK(start.priorities.empty());
        CHECK_NOTHROW(validate(g, start));
        return std::vector<PriorityVariant>{{"critical", critical}, {"graded", graded}};
    };
    const std::vector<RefineCandidate> candidates = baseline_candidates(g);

    Prioritised faster(g, graded, 0.04);
    const RefineResult r = refine_schedule(g, candidates, faster, options);
    REQUIRE(r.priority_trial.size() == 3);
    CHECK(r.priority_trial[0].name == "none");
    CHECK(r.priority_trial[2].latency_ms == Approx(0.96 * r.priority_trial[0].latency_ms));
    CHECK(trials == 1);
    CHECK(r.priority_trial[0].handovers == 0);  // one level everywhere
    tried.priorities = graded;
    CHECK(r.priority_trial[2].handovers == priority_handovers(StreamProgram(g, tried)));
    REQUIRE(r.kept.size() >= 2);
    CHECK(r.kept[1].move == "priorities graded");
    CHECK(r.schedule.priorities == graded);  // every later move kept them
    CHECK(r.latency_ms <= r.kept[1].latency_ms);
    // The closing check timed the result with and without them, and they still gained.
    CHECK(r.priority_check.with_ms == Approx(0.96 * r.priority_check.without_ms));
    CHECK(r.latency_ms == r.priority_check.with_ms);

    // Levels that gain in the trial but not once the moves are made: the closing check drops
    // them, and their step with them.
    Prioritised fading(g, graded, 0.04, true);
    const RefineResult faded = refine_schedule(g, candidates, fading, options);
    CHECK(faded.priority_trial.size() == 3);
    CHECK(faded.priority_check.with_ms == Approx(faded.priority_check.without_ms));
    CHECK(faded.schedule.priorities.empty());
    CHECK(faded.latency_ms == faded.priority_check.without_ms);
    for (const RefineStep& step : faded.kept) CHECK(step.move.rfind("priorities", 0) != 0);

    // Levels that change nothing are tried and not kept (the margin is not met).
    Prioritised same(g, graded, 0.0);
    const RefineResult plain = refine_schedule(g, candidates, same, options);
    CHECK(plain.priority_trial.size() == 3);
    CHECK(plain.schedule.priorities.empty());
    for (const RefineStep& step : plain.kept) CHECK(step.move.rfind("priorities", 0) != 0);
    CHECK(plain.priority_check.with_ms == 0);  // nothing to check

    // None given: no trial.
    options.priority_variants = nullptr;
    CHECK(refine_schedule(g, candidates, faster, options).priority_trial.empty());
}

TEST_CASE("refinement: a schedule computing another result is never kept, and the first is named",
          "[refine]") {
    const Graph g = build_zoo_model("googlenet", 1);
    // Agrees on its first `trusted` checks (the start candidates), then never (an engine bug).
    class Doubting final : public OnTimeline {
    public:
        Doubting(const Graph& g, int trusted) : OnTimeline(g, "doubting", true), trusted_(trusted) {}
        bool agrees(const Schedule&, std::string& why) override {
            if (++checks <= trusted_) return true;
            why = "a different result (a test's claim)";
            return false;
        }
        int checks = 0;

    private:
        int trusted_;
    };
    RefineOptions options;
    options.max_evaluations = 60;
    options.time_budget_s = 1e9;
    for (const bool every : {false, true}) {
        INFO("check every schedule: " << every);
        options.check_every = every;
        // Checking every schedule, the candidates are checked too: six of them (three in both
        // forms) are trusted.
        Doubting doubting(g, every ? 6 : 0);
        const RefineResult r = refine_schedule(g, baseline_candidates(g), doubting, options);
        CHECK(r.kept.size() == 1);  // the start only
        CHECK(r.disagreed == doubting.checks - (every ? 6 : 0));
        CHECK(r.disagreed > 0);
        // Each schedule is checked once: when every one is, a faster one is not checked again.
        if (every) CHECK(doubting.checks == r.evaluations);
        CHECK_THAT(r.first_disagreement,
                   Catch::StartsWith("a different result (a test's claim) (evaluation ") &&
                       Catch::Contains("schedule {\"blocks\""));
    }
}

TEST_CASE("refinement: once single moves find nothing new, moves in twos and threes go on",
          "[refine]") {
    // SqueezeNet's schedules have few neighbours: single moves run out long before the budget.
    const Graph g = build_zoo_model("squeezenet1_1", 1);
    SimulatedScheduleEvaluator evaluator(g, SimCostModel());
    RefineOptions options;
    options.time_budget_s = 60;  // both end by running out of new schedules, not by time
    options.max_compound_steps = 1;
    const RefineResult single = refine_schedule(g, baseline_candidates(g), evaluator, options);
    options.max_compound_steps = 3;
    const RefineResult compound = refine_schedule(g, baseline_candidates(g), evaluator, options);
    INFO(single.evaluations << " then " << compound.evaluations << " evaluations");
    CHECK(compound.seconds < 60);
    // The same seed: the same path until single moves run out, then further.
    CHECK(compound.evaluations > single.evaluations);
    CHECK(compound.latency_ms <= single.latency_ms);
    REQUIRE_NOTHROW(validate(g, compound.schedule));
}

TEST_CASE("refinement is deterministic for a seed", "[refine]") {
    const Graph g = build_zoo_model("inception_v3", 1);
    SimulatedScheduleEvaluator evaluator(g, SimCostModel());
    RefineOptions options;
    options.max_evaluations = 120;
    options.time_budget_s = 1e9;
    options.seed = 7;
    const RefineResult a = refine_schedule(g, baseline_candidates(g), evaluator, options);
    const RefineResult b = refine_schedule(g, baseline_candidates(g), evaluator, options);
    CHECK(a.schedule == b.schedule);
    CHECK(a.latency_ms == b.latency_ms);
    CHECK(a.kept.size() == b.kept.size());
}

TEST_CASE("refinement refuses when no candidate can run", "[refine]") {
    const Graph g = build_zoo_model("squeezenet1_1", 1);
    class Failing final : public ScheduleEvaluator {
    public:
        ScheduleMeasurement measure(const Schedule&) override { return {0, 0, false, "no", false}; }
        std::string name() const override { return "failing"; }
        bool simulated() const override { return true; }
    } failing;
    CHECK_THROWS_AS(refine_schedule(g, baseline_candidates(g), failing, RefineOptions{}), Error);
}

TEST_CASE("the DP's time budget: a wide block finishes in time with a valid schedule",
          "[refine][budget]") {
    const Graph g = wide_block(40);  // 121 ops, width 40
    SimCostModel model;
    SearchOptions options;
    options.progress = false;
    options.time_budget_s = 2.0;
    const auto start = std::chrono::steady_clock::now();
    const SearchResult r = ios_search(g, model, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 2.0 + 8.0);  // the deadline, plus the greedy fallback and slack for CI
    REQUIRE_NOTHROW(validate(g, r.schedule));
    CHECK(r.latency_ms > 0);
    // Without a deadline the windows keep each part's DP small: every part searched.
    options.time_budget_s = 0;
    options.max_part_states = 256;
    const SearchResult whole = ios_search(g, model, options);
    REQUIRE_NOTHROW(validate(g, whole.schedule));
    CHECK(whole.stats.totals().parts_out_of_time == 0);
    CHECK(whole.stats.totals().parts > 1);
}
