// Kernel moves (tuning/kernel_moves.h): the candidates and the loop, judged by a simulated
// evaluator (a table of made-up latencies per kernel); no GPU.
#include <catch2/catch.hpp>

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tuning/kernel_moves.h"

using namespace iostune;

namespace {

ConvChoice choice(const std::string& algorithm, double ms, ConvObjective objective) {
    return ConvChoice{algorithm, "TENSOR_OP_MATH", "graph", ms, objective};
}

OpPlan plan(int op, std::vector<std::string> signatures) {
    OpPlan p;
    p.op_id = op;
    p.conv_signatures = std::move(signatures);
    return p;
}

// Simulated: the schedule's latency is a base plus each signature's cost under the algorithm it
// runs (missing from the table: 0), optionally with a timing's first draw off by `luck` for
// the named algorithms (a gain that does not hold when timed again).
class TableEvaluator final : public KernelMoveEvaluator {
public:
    std::map<std::string, std::map<std::string, double>> cost;  // signature -> algorithm -> ms
    std::map<std::string, std::string> kept, applied;           // signature -> algorithm
    std::set<std::string> refuse;                               // algorithms that cannot run
    std::set<std::string> wrong;                                // algorithms computing garbage
    std::map<std::string, double> luck;                         // algorithm -> first-draw gain
    // algorithm -> a gain every timing of a single move shows, the check of all kept together
    // not (gains that do not add up)
    std::map<std::string, double> move_luck;
    std::map<std::string, std::string> start;  // what ran before the first apply
    int timings = 0;

    double latency(const std::map<std::string, std::string>& runs) const {
        double ms = 1.0;
        for (const auto& [signature, algorithm] : runs) {
            const auto s = cost.find(signature);
            if (s == cost.end()) continue;
            const auto a = s->second.find(algorithm);
            if (a != s->second.end()) ms += a->second;
        }
        return ms;
    }
    std::pair<std::string, std::string> last;  // signature, its algorithm before the last apply
    bool apply(const std::string& signature, const ConvChoice& c) override {
        if (start.empty()) start = kept;
        if (refuse.count(c.algorithm)) return false;
        last = {signature, applied.at(signature)};
        applied[signature] = c.algorithm;
        return true;
    }
    void undo() override { applied[last.first] = last.second; }
    std::pair<double, double> time_applied() override {
        double applied_ms = latency(applied);
        for (const auto& [signature, algorithm] : applied)
            if (kept.at(signature) != algorithm && luck.count(algorithm) && timings % 2 == 0)
                applied_ms -= luck.at(algorithm);
        for (const auto& [signature, algorithm] : applied)
            if (kept.at(signature) != algorithm && move_luck.count(algorithm))
                applied_ms -= move_luck.at(algorithm);
        ++timings;
        return {latency(kept), applied_ms};
    }
    std::pair<double, double> time_start_and_kept() override {
        return {latency(start), latency(kept)};
    }
    std::vector<std::pair<std::string, std::string>> kept_stack;  // what each keep() replaced
    void undo_kept() override {
        const auto [signature, before] = kept_stack.back();
        kept_stack.pop_back();
        applied[signature] = kept[signature] = before;
    }
    std::string difference() override {
        for (const auto& [signature, algorithm] : applied)
            if (wrong.count(algorithm)) return "max |difference| 1";
        return "";
    }
    void keep() override {
        kept = applied;
        kept_stack.push_back(last);
    }
};

}  // namespace

TEST_CASE("kernel move candidates: the other objective's kernel per signature an op holds, "
          "heaviest first",
          "[measure][objective]") {
    // "a" held by two ops (0.02 ms each), "b" by one (0.03 ms), "c" by one but both objectives
    // chose the same kernel, "m" only a merged convolution's (no op holds it), "d" unknown to
    // the other objective.
    const std::vector<OpPlan> plans = {plan(0, {"a"}), plan(1, {"b", "c"}), plan(2, {"a", "d"})};
    const ConvChoices alone = {{"a", choice("GRAPH_0", 0.02, ConvObjective::Alone)},
                               {"b", choice("GRAPH_1", 0.03, ConvObjective::Alone)},
                               {"c", choice("GRAPH_2", 0.01, ConvObjective::Alone)},
                               {"d", choice("GRAPH_3", 0.01, ConvObjective::Alone)},
                               {"m", choice("GEMM_0", 0.05, ConvObjective::Alone)}};
    ConvChoices corun = {{"a", choice("GRAPH_4", 0.021, ConvObjective::CoRun)},
                         {"b", choice("GRAPH_5", 0.031, ConvObjective::CoRun)},
                         {"c", choice("GRAPH_2", 0.01, ConvObjective::CoRun)},
                         {"m", choice("GEMM_1", 0.05, ConvObjective::CoRun)}};
    const std::vector<KernelMove> moves = kernel_move_candidates(plans, alone, {alone, corun});
    REQUIRE(moves.size() == 2);
    CHECK(moves[0].signature == "a");  // 2 x 0.02 ms at stake before b's 0.03
    CHECK(moves[0].choice == corun.at("a"));
    CHECK(moves[0].weight_ms == Approx(0.04));
    CHECK(moves[1].signature == "b");
    CHECK(moves[1].choice.algorithm == "GRAPH_5");
    // Another objective's choice that differs only in what it was chosen for is no move.
    corun["a"] = choice("GRAPH_0", 0.02, ConvObjective::CoRun);
    CHECK(kernel_move_candidates(plans, alone, {alone, corun}).size() == 1);
    CHECK(kernel_move_candidates(plans, alone, {alone}).empty());
}

TEST_CASE("kernel moves keep a switch only when it is faster twice and computes the same, and "
          "never end slower than they start",
          "[measure][objective]") {
    TableEvaluator e;
    // a: the other kernel saves 0.05 ms. b: costs 0.02 ms more. c: within the margin (0.001 of
    // ~1.1 ms). d: looks 0.05 ms faster on its first timing only. f: faster but wrong. g:
    // refused by the engine.
    e.cost = {{"a", {{"A0", 0.10}, {"A1", 0.05}}},
              {"b", {{"B0", 0.02}, {"B1", 0.04}}},
              {"c", {{"C0", 0.01}, {"C1", 0.009}}},
              {"d", {{"D0", 0.01}, {"D1", 0.01}}},
              {"f", {{"F0", 0.03}, {"F1", 0.0}}},
              {"g", {{"G0", 0.03}, {"G1", 0.0}}}};
    e.luck = {{"D1", 0.05}};
    e.wrong = {"F1"};
    e.refuse = {"G1"};
    ConvChoices current;
    std::vector<KernelMove> moves;
    for (const std::string s : {"a", "b", "c", "d", "f", "g"}) {
        const std::string upper(1, char(std::toupper(s[0])));
        current[s] = choice(upper + "0", 0.01, ConvObjective::Alone);
        e.kept[s] = e.applied[s] = upper + "0";
        moves.push_back({s, choice(upper + "1", 0.01, ConvObjective::CoRun), 0.01});
    }
    const double start = e.latency(e.kept);
    const KernelMovesResult r = move_kernels(moves, current, e, {});
    CHECK(r.candidates == 6);
    CHECK(r.kept == std::vector<std::string>{"a"});
    CHECK(r.refused == 1);
    CHECK(r.timed == 5);
    CHECK(r.unconfirmed == 1);
    CHECK(r.disagreed == 1);
    CHECK(r.first_disagreement.rfind("f: ", 0) == 0);
    CHECK_FALSE(r.out_of_time);
    CHECK(r.least_ratio < 0.96);  // d's lucky first draw (or a's gain)
    CHECK(r.start_ms == Approx(start));
    CHECK(r.end_ms == Approx(start - 0.05));  // f's timing, with a kept
    // What is kept runs, and every move not kept was undone.
    CHECK(r.choices.at("a").algorithm == "A1");
    for (const std::string s : {"b", "c", "d", "f", "g"}) {
        CHECK(r.choices.at(s) == current.at(s));
        CHECK(e.applied.at(s) == current.at(s).algorithm);
    }
    CHECK(e.kept == e.applied);
    CHECK(e.latency(e.kept) == Approx(start - 0.05));
    CHECK(e.latency(e.kept) <= start);
}

TEST_CASE("kernel moves stop when the time does", "[measure][objective]") {
    TableEvaluator e;
    e.cost = {{"a", {{"A0", 0.10}, {"A1", 0.05}}}, {"b", {{"B0", 0.10}, {"B1", 0.05}}}};
    const ConvChoices current = {{"a", choice("A0", 0.1, ConvObjective::Alone)},
                                 {"b", choice("B0", 0.1, ConvObjective::Alone)}};
    e.kept = e.applied = {{"a", "A0"}, {"b", "B0"}};
    const std::vector<KernelMove> moves = {{"a", choice("A1", 0.05, ConvObjective::CoRun), 0.1},
                                           {"b", choice("B1", 0.05, ConvObjective::CoRun), 0.1}};
    int asked = 0;
    KernelMovesOptions options;
    options.out_of_time = [&] { return ++asked > 1; };  // time for one move
    const KernelMovesResult r = move_kernels(moves, current, e, options);
    CHECK(r.out_of_time);
    CHECK(r.kept == std::vector<std::string>{"a"});
    CHECK(e.applied.at("b") == "B0");
}

TEST_CASE("kernel moves that pass one by one but are together no faster are all put back",
          "[measure][objective]") {
    TableEvaluator e;
    // a1 and b1 cost what a0 and b0 do, but each looks 0.01 ms faster whenever timed alone.
    e.cost = {{"a", {{"A0", 0.10}, {"A1", 0.10}}}, {"b", {{"B0", 0.10}, {"B1", 0.10}}}};
    e.move_luck = {{"A1", 0.01}, {"B1", 0.01}};
    const ConvChoices current = {{"a", choice("A0", 0.1, ConvObjective::Alone)},
                                 {"b", choice("B0", 0.1, ConvObjective::Alone)}};
    e.kept = e.applied = {{"a", "A0"}, {"b", "B0"}};
    const std::vector<KernelMove> moves = {{"a", choice("A1", 0.1, ConvObjective::CoRun), 0.1},
                                           {"b", choice("B1", 0.1, ConvObjective::CoRun), 0.1}};
    const KernelMovesResult r = move_kernels(moves, current, e, {});
    CHECK(r.timed == 2);
    CHECK(r.reverted == 2);
    CHECK(r.kept.empty());
    CHECK(r.choices == current);
    CHECK(r.check_start_ms == Approx(r.check_kept_ms));
    CHECK(e.applied == std::map<std::string, std::string>{{"a", "A0"}, {"b", "B0"}});
    CHECK(e.kept == e.applied);

    // Real gains that add up stay, and say so.
    e = TableEvaluator();
    e.cost = {{"a", {{"A0", 0.10}, {"A1", 0.05}}}, {"b", {{"B0", 0.10}, {"B1", 0.05}}}};
    e.kept = e.applied = {{"a", "A0"}, {"b", "B0"}};
    const KernelMovesResult kept = move_kernels(moves, current, e, {});
    CHECK(kept.kept == std::vector<std::string>{"a", "b"});
    CHECK(kept.reverted == 0);
    CHECK(kept.check_kept_ms == Approx(kept.check_start_ms - 0.10));
}
