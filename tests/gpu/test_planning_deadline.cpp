// [gpu] EngineOptions::choose_by: an engine planned past it throws PlanningDeadline at the first
// convolution it would time, so a probe (the search's layout choice) is bounded; a convolution
// whose choice needs no timing (chosen earlier in the process, or pinned) still plans. One whose
// pace cannot make it stops at half its time (PlanningTooSlow). EngineOptions::
// time_convolutions_by: past it, convolutions are chosen quickly, marked so, and compute what
// fully timed ones do.
#include <catch2/catch.hpp>

#include <chrono>

#include "src/engine/engine.h"
#include "src/reference/reference.h"
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

TEST_CASE("an engine past its time for choosing kernels chooses them quickly, and they compute",
          "[gpu][engine][pace]") {
    // Shapes no other test uses (not cached in this process): an ungrouped 3x3 with bias and
    // ReLU (graph API, legacy heuristics), a depthwise 5x5 (the engine's own kernel in
    // channels-last) and a 1x1 (cuBLASLt), in each precision and layout.
    Graph graph("quick", Shape{2, 19, 15, 13});
    const int a = graph.add(OpKind::Conv, same_conv(26, 3, {.relu = true}), {kGraphInput}, "3x3");
    const int b = graph.add(OpKind::Conv, same_conv(26, 5, {.groups = 26}), {a}, "depthwise");
    graph.add(OpKind::Conv, same_conv(17, 1), {b}, "1x1");
    init_random_weights(graph, 11);
    const HostTensor input = random_input(graph.input_shape(), 3);
    const HostTensor ref = reference_run(graph, input);
    for (const Plan& plan : every_plan()) {
        INFO(label(plan));
        EngineOptions options = options_for(plan);
        options.time_convolutions_by = SteadyClock::now() - std::chrono::seconds(1);
        const auto begin = SteadyClock::now();
        Engine engine(graph, options);
        const double seconds = std::chrono::duration<double>(SteadyClock::now() - begin).count();
        const ConvChoices choices = engine.conv_choices();
        CHECK(choices.size() == 3);
        CHECK(engine.quick_conv_count() == 3);  // the search's count, per planned convolution
        for (const auto& [signature, choice] : choices) {
            INFO(signature << ": " << choice.algorithm << " " << choice.path);
            CHECK(choice.quick);
            CHECK(choice.time_ms > 0);
        }
        engine.set_input(input);
        CHECK(relative_error(run_schedule(engine, sequential_schedule(graph)), ref) <
              model_error_bound(plan.precision));
        // Pinned from its choices (as a replay pins a stored schedule's), it runs the same.
        EngineOptions pinned_options = options_for(plan);
        pinned_options.conv_choices = choices;
        Engine pinned(graph, pinned_options);
        CHECK(pinned.pinned_conv_count() == 3);
        CHECK(pinned.quick_conv_count() == 3);  // still quick: a later search times them again
        CHECK(pinned.conv_choices() == choices);
        WARN(fmt::format("{}: chosen quickly in {:.2f} s: {}", label(plan), seconds,
                         plan_summary(engine)));
    }
}
