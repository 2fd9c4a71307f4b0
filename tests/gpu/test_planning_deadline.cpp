// [gpu] EngineOptions::choose_by: an engine planned past it throws PlanningDeadline at the first
// convolution it would time, so a probe (the search's layout choice) is bounded; a convolution
// whose choice needs no timing (chosen earlier in the process, or pinned) still plans. One whose
// pace cannot make it stops at half its time (PlanningTooSlow).
#include <catch2/catch.hpp>

#include <chrono>

#include "src/engine/engine.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/engine_fixtures.h"

using namespace iostune;
using namespace iostune::test;

TEST_CASE("an engine past its planning deadline stops at the first convolution it would time",
          "[gpu][engine]") {
    // Shapes no other test uses, so no choice is cached in this process before the first engine.
    Graph graph("deadline", Shape{1, 37, 13, 11});
    const int a = graph.add(OpKind::Conv, same_conv(29, 5), {kGraphInput}, "conv5x5");
    graph.add(OpKind::Conv, same_conv(23, 3), {a}, "conv3x3");
    init_random_weights(graph, 5);
    EngineOptions options = options_for(Plan{Precision::Tf32, TensorLayout::Nchw});
    options.choose_by = SteadyClock::now() - std::chrono::seconds(1);
    CHECK_THROWS_AS(Engine(graph, options), PlanningDeadline);

    // Without the deadline the choices are timed (and kept by the process); past it again, the
    // engine plans from them and times nothing.
    EngineOptions unbounded = options;
    unbounded.choose_by.reset();
    const Engine timed(graph, unbounded);
    const ConvChoices cached = Engine(graph, options).conv_choices();
    REQUIRE(cached.size() == timed.conv_choices().size());
    for (const auto& [signature, choice] : timed.conv_choices())
        CHECK(cached.at(signature).algorithm == choice.algorithm);

    // A choice pinned from a store needs no timing either (NHWC: other keys, not cached).
    EngineOptions nhwc = options_for(Plan{Precision::Tf32, TensorLayout::Nhwc});
    nhwc.choose_by = options.choose_by;
    CHECK_THROWS_AS(Engine(graph, nhwc), PlanningDeadline);
    nhwc.choose_by.reset();
    const ConvChoices nhwc_choices = Engine(graph, nhwc).conv_choices();
    nhwc.choose_by = options.choose_by;
    nhwc.conv_choices = nhwc_choices;
    CHECK(Engine(graph, nhwc).pinned_conv_count() == 2);
}

TEST_CASE("a probe that cannot choose its convolutions in its time stops at half of it",
          "[gpu][engine][pace]") {
    // NASNet-A in NCHW: its depthwise convolutions take cuDNN minutes to choose (call90), so
    // with 20 s given the engine's pace says, at 10 s, it cannot finish: PlanningTooSlow then,
    // not the deadline at 20 s. (Its shapes are unlike every other test's in NCHW.)
    const Graph graph = build_zoo_model("nasnet_a_large", 1);
    EngineOptions options = options_for(Plan{Precision::Tf32, TensorLayout::Nchw});
    const auto begin = SteadyClock::now();
    options.choose_by = begin + std::chrono::seconds(20);
    CHECK_THROWS_AS(Engine(graph, options), PlanningTooSlow);
    CHECK(std::chrono::duration<double>(SteadyClock::now() - begin).count() < 20);
}
