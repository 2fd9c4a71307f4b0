// The memory planner (src/memory_planner.h), its offset heuristic (src/offset_assignment.h) and
// the concurrency audit (src/memory_audit.h) on small hand-built graphs: where tensors live, what
// shares bytes, and that broken plans and schedules are caught naming both ops.
#include <catch2/catch.hpp>

#include <algorithm>

#include "src/error.h"
#include "src/memory_audit.h"
#include "src/memory_planner.h"
#include "src/model_set.h"
#include "src/offset_assignment.h"
#include "src/schedule.h"
#include "src/stream_program.h"
#include "tests/search/test_graphs.h"

using namespace iostune;

namespace {

using test::conv;
using S = Stage;
constexpr auto C = StageStrategy::Concurrent;
constexpr auto M = StageStrategy::Merge;

MemoryPlanOptions options(Precision p = Precision::Fp32, TensorLayout l = TensorLayout::Nchw) {
    MemoryPlanOptions o;
    o.precision = p;
    o.layout = l;
    return o;
}

bool bytes_overlap(const PlannedBuffer& a, const PlannedBuffer& b) {
    return a.pinned == b.pinned && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

// How many pairs of distinct buffers share bytes.
int shared_pairs(const MemoryPlan& plan) {
    int pairs = 0;
    for (size_t i = 0; i < plan.buffers.size(); ++i)
        for (size_t j = i + 1; j < plan.buffers.size(); ++j)
            pairs += bytes_overlap(plan.buffers[i], plan.buffers[j]) ? 1 : 0;
    return pairs;
}

}  // namespace

TEST_CASE("greedy by size: largest first, best-fitting gap, conflicts never overlap", "[memory]") {
    // 0 and 1 conflict; 2 conflicts with 0 only, so it may take 1's bytes.
    const std::vector<int64_t> sizes = {100, 100, 50};
    const auto conflict = [](int a, int b) { return (a == 0 || b == 0) && a != b; };
    const OffsetAssignment r = assign_offsets_greedy_by_size(sizes, conflict, 64);
    CHECK(r.offsets == std::vector<int64_t>{0, 128, 128});
    CHECK(r.total_bytes == 256);
    // Nothing conflicts: everything at 0; everything conflicts: one after another.
    CHECK(assign_offsets_greedy_by_size(
              sizes, [](int, int) { return false; }, 64)
              .total_bytes == 128);
    const OffsetAssignment all = assign_offsets_greedy_by_size(
        sizes, [](int a, int b) { return a != b; }, 64);
    CHECK(all.total_bytes == 128 + 128 + 64);
    // A gap that fits is taken before the end: 0 at [0, 128), 1 (conflicts with 0) at
    // [128, 224), 2 (conflicts with 1) at [0, 64); 3 conflicts with 1 and 2 and fits the gap
    // [64, 128) between them.
    const std::vector<int64_t> gaps = {128, 96, 64, 32};
    const auto pairs = [](int a, int b) {
        const auto is = [&](int x, int y) { return (a == x && b == y) || (a == y && b == x); };
        return is(0, 1) || is(1, 2) || is(3, 1) || is(3, 2);
    };
    const OffsetAssignment g = assign_offsets_greedy_by_size(gaps, pairs, 16);
    CHECK(g.offsets == std::vector<int64_t>{0, 128, 0, 64});
    CHECK(g.total_bytes == 224);
    // Equal sizes, conflicts along the path 0 - 2 - 3 - 1. By id: 0 and 1 at 0, 2 after 0, 3
    // after 1 and 2: 48 bytes. The buffers with more conflicts first (2, 3, then 0, 1): 32, the
    // two live at once; the smaller of the two orders is kept.
    const auto path = [](int a, int b) {
        const auto is = [&](int x, int y) { return (a == x && b == y) || (a == y && b == x); };
        return is(0, 2) || is(2, 3) || is(3, 1);
    };
    const OffsetAssignment p = assign_offsets_greedy_by_size({16, 16, 16, 16}, path, 16);
    CHECK(p.total_bytes == 32);
    CHECK(p.offsets == std::vector<int64_t>{16, 0, 0, 16});
}

TEST_CASE("memory plan: concat producers write their slice, views point into their input",
          "[memory]") {
    const Graph g = test::inception_like();
    const MemoryPlan plan = plan_memory(g, sequential_schedule(g), options());
    const int concat = g.size() - 1;
    const TensorPlace& cat = plan.op_places[size_t(concat)];
    int first = 0;
    for (int in : g.op(concat).inputs) {
        const TensorPlace& p = plan.op_places[size_t(in)];
        CHECK(p.buffer == cat.buffer);
        CHECK(p.first_channel == first);
        first += g.op(in).output.c;
    }
    // The output is pinned (read after the launch), and so is the input.
    CHECK(plan.buffers[size_t(cat.buffer)].pinned);
    CHECK(plan.buffers[size_t(plan.input_places[0].buffer)].pinned);
    for (const PlannedBuffer& b : plan.buffers) {
        INFO(b.name);
        CHECK(b.offset % kPlanAlignment == 0);
        CHECK(b.bytes % kPlanAlignment == 0);
    }
    // fp32 NCHW: the float input is the input itself, and the output needs no copy.
    CHECK(plan.input_float[0] == plan.input_places[0].buffer);
    CHECK(plan.output_float == std::vector<int>{-1});
}

TEST_CASE("memory plan: the sequential schedule reuses bytes, no schedule reuses none",
          "[memory]") {
    const Graph g = test::inception_like();
    const MemoryPlan none = plan_memory_without_schedule(g, options());
    const MemoryPlan seq = plan_memory(g, sequential_schedule(g), options());
    CHECK(shared_pairs(none) == 0);
    CHECK(shared_pairs(seq) > 0);
    CHECK(seq.shared_bytes < none.shared_bytes);
    CHECK(seq.io_bytes == none.io_bytes);
    CHECK(seq.activation_bytes() >= seq.lower_bound_bytes);
    // Without reuse a schedule's plan is as large as no schedule's.
    MemoryPlanOptions no_reuse = options();
    no_reuse.reuse = false;
    CHECK(shared_pairs(plan_memory(g, sequential_schedule(g), no_reuse)) == 0);
}

TEST_CASE("memory plan: 16-bit storage halves activations, float I/O copies stay float",
          "[memory]") {
    const Graph g = test::inception_like();
    const MemoryPlan f32 = plan_memory(g, sequential_schedule(g), options(Precision::Tf32));
    const MemoryPlan f16 =
        plan_memory(g, sequential_schedule(g), options(Precision::Fp16, TensorLayout::Nhwc));
    CHECK(f16.shared_bytes < f32.shared_bytes);
    REQUIRE(f16.input_float[0] != f16.input_places[0].buffer);
    const PlannedBuffer& in_float = f16.buffers[size_t(f16.input_float[0])];
    CHECK(in_float.bytes >= g.input_shape().elements() * 4);
    REQUIRE(f16.output_float[0] >= 0);
    CHECK(f16.buffers[size_t(f16.output_float[0])].kind == BufferKind::OutputFloat);
}

TEST_CASE("memory plan: merged convolutions live in their slices of the stacked output",
          "[memory]") {
    Graph g("merge_graph", Shape{2, 8, 16, 16});
    const int stem = g.add(OpKind::Conv, conv(16, 3), {kGraphInput}, "stem");
    const int m1 = g.add(OpKind::Conv, conv(8, 1), {stem}, "m1");
    const int m2 = g.add(OpKind::Conv, conv(8, 1), {stem}, "m2");
    const int add = g.add(OpKind::Add, AddAttrs{}, {m1, m2}, "add");
    const int tail = g.add(OpKind::Conv, conv(8, 3), {m1}, "tail");
    g.add(OpKind::Add, AddAttrs{}, {add, tail}, "out");
    const Schedule s{{{S{C, {{stem}}}, S{M, {{m1, m2}}}, S{C, {{add}, {tail}}}, S{C, {{5}}}}}};
    const MemoryPlan plan = plan_memory(g, s, options());
    REQUIRE(plan.merges.size() == 1);
    const int merged = plan.merges[0].buffer;
    CHECK(plan.buffers[size_t(merged)].shape.c == 16);
    CHECK(plan.op_places[size_t(m1)] == TensorPlace{merged, 0});
    CHECK(plan.op_places[size_t(m2)] == TensorPlace{merged, 8});
    // No home buffers are left for them, and the tail's convolution stages its strided input.
    for (const PlannedBuffer& b : plan.buffers)
        CHECK((b.kind != BufferKind::Activation || (b.op != m1 && b.op != m2)));
    CHECK(plan.scratch[size_t(tail)].staged_input >= 0);
    CHECK(plan.merge("m:[1,2]") == &plan.merges[0]);
    CHECK_NOTHROW(audit_memory(g, plan, StreamProgram(g, s)));

    SECTION("a merged op that is a graph output stays home, copied out of the merge") {
        Graph two = g;
        two.set_outputs({5, m2});
        const MemoryPlan p = plan_memory(two, s, options());
        CHECK(p.op_places[size_t(m1)].buffer == p.merges[0].buffer);
        CHECK(p.op_places[size_t(m2)].buffer != p.merges[0].buffer);
        CHECK(p.buffers[size_t(p.op_places[size_t(m2)].buffer)].pinned);
        CHECK_NOTHROW(audit_memory(two, p, StreamProgram(two, s)));
    }
}

TEST_CASE("memory plan: a batched merge's ops stay home, and nothing it touches shares bytes",
          "[memory]") {
    Graph g("batched", Shape{1, 8, 8, 8});
    const int stem = g.add(OpKind::Conv, conv(8, 1), {kGraphInput}, "stem");
    const int a = g.add(OpKind::Conv, conv(8, 1), {stem}, "a");
    const int b = g.add(OpKind::Conv, conv(8, 3), {stem}, "b");
    SepConvAttrs sep;
    sep.out_channels = 8;
    const int sa = g.add(OpKind::SepConv, sep, {a}, "sa");
    sep.kernel = 5;
    sep.pad = 2;
    const int sb = g.add(OpKind::SepConv, sep, {b}, "sb");
    const int sum = g.add(OpKind::Add, AddAttrs{}, {sa, sb}, "sum");
    const Schedule staged{{{S{C, {{stem}}}, S{C, {{a}, {b}}}, S{M, {{sa, sb}}}, S{C, {{sum}}}}}};
    REQUIRE(merge_kind(g, {sa, sb}) == MergeKind::Batched);
    for (const Schedule& s : {staged, with_form(staged, ScheduleForm::Dataflow)})
    for (const TensorLayout layout : {TensorLayout::Nchw, TensorLayout::Nhwc}) {
        const MemoryPlan plan = plan_memory(g, s, options(Precision::Fp16, layout));
        CHECK(plan.merges.empty());  // nothing stacked
        std::vector<int> touched;  // by the merge's one launch: all live at once
        for (int id : {a, b, sa, sb}) {
            const PlannedBuffer& home = plan.buffers[size_t(plan.op_places[size_t(id)].buffer)];
            CHECK(home.kind == BufferKind::Activation);
            CHECK(home.op == id);
            touched.push_back(plan.op_places[size_t(id)].buffer);
        }
        for (int id : {sa, sb}) {
            REQUIRE(plan.scratch[size_t(id)].depthwise_output >= 0);
            touched.push_back(plan.scratch[size_t(id)].depthwise_output);
        }
        for (size_t i = 0; i < touched.size(); ++i)
            for (size_t j = i + 1; j < touched.size(); ++j)
                CHECK_FALSE(bytes_overlap(plan.buffers[size_t(touched[i])],
                                          plan.buffers[size_t(touched[j])]));
        CHECK_NOTHROW(audit_memory(g, plan, StreamProgram(g, s)));
    }
}

TEST_CASE("memory plan: per-op scratch (depthwise output, staged and packed inputs)", "[memory]") {
    Graph g("scratch", Shape{2, 8, 8, 8});
    const int a = g.add(OpKind::Conv, conv(8, 3), {kGraphInput}, "a");
    const int b = g.add(OpKind::Conv, conv(8, 3), {kGraphInput}, "b");
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {a, b}, "cat");
    const int slice = g.add(OpKind::ChannelSlice, ChannelSliceAttrs{4, 12}, {cat}, "slice");
    SepConvAttrs sep;
    sep.out_channels = 8;
    const int sc = g.add(OpKind::SepConv, sep, {slice}, "sep");
    const int fc = g.add(OpKind::Linear, LinearAttrs{10, true}, {slice}, "fc");
    const int fc2 = g.add(OpKind::Linear, LinearAttrs{10, true}, {sc}, "fc2");
    g.set_outputs({fc, fc2});
    const MemoryPlan nchw = plan_memory(g, sequential_schedule(g), options());
    // The slice is a view of the concat's buffer: strided.
    CHECK(nchw.op_places[size_t(slice)] == TensorPlace{nchw.op_places[size_t(cat)].buffer, 4});
    CHECK_FALSE(nchw.packed(nchw.op_places[size_t(slice)], g.op(slice).output));
    const OpScratch& s = nchw.scratch[size_t(sc)];
    REQUIRE(s.depthwise_output >= 0);
    CHECK(nchw.buffers[size_t(s.depthwise_output)].shape == Shape{2, 8, 8, 8});
    CHECK(s.staged_input >= 0);  // strided input (and a pre-ReLU)
    CHECK(s.staged_output < 0);
    // cuBLAS reads an NCHW slice's rows as they are; a channels-last slice is packed first.
    CHECK(nchw.scratch[size_t(fc)].staged_input < 0);
    CHECK(nchw.scratch[size_t(fc2)].staged_input < 0);
    const MemoryPlan nhwc =
        plan_memory(g, sequential_schedule(g), options(Precision::Fp16, TensorLayout::Nhwc));
    CHECK(nhwc.scratch[size_t(fc)].staged_input >= 0);
    CHECK(nhwc.scratch[size_t(fc2)].staged_input < 0);
    CHECK_NOTHROW(audit_memory(g, nhwc, StreamProgram(g, sequential_schedule(g))));

    SECTION("refined by what the chosen convolutions stage (the engine's second plan)") {
        MemoryPlanOptions refined = options();
        refined.staging = StagingUse{std::vector<bool>(size_t(g.size()), false),
                                     std::vector<bool>(size_t(g.size()), false), {}};
        const MemoryPlan none = plan_memory(g, sequential_schedule(g), refined);
        CHECK(none.scratch[size_t(sc)].staged_input < 0);
        CHECK(none.scratch[size_t(sc)].depthwise_output >= 0);  // always its own
        CHECK(none.buffers.size() < nchw.buffers.size());
        refined.staging->input[size_t(sc)] = true;
        CHECK(plan_memory(g, sequential_schedule(g), refined).scratch[size_t(sc)].staged_input >= 0);
        // A channels-last Linear packs a strided input whatever the convolutions chose.
        MemoryPlanOptions nhwc_refined = options(Precision::Fp16, TensorLayout::Nhwc);
        nhwc_refined.staging = refined.staging;
        CHECK(plan_memory(g, sequential_schedule(g), nhwc_refined).scratch[size_t(fc)].staged_input >= 0);
    }
}

TEST_CASE("memory plan: ops that may run at the same time never share bytes", "[memory]") {
    const Graph g = test::diamond();  // a -> {b, c} -> d
    const Schedule staged{{{S{C, {{0}}}}, {S{C, {{1}, {2}}}, S{C, {{3}}}}}};
    for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow}) {
        const Schedule s = with_form(staged, form);
        const MemoryPlan plan = plan_memory(g, s, options());
        const StreamProgram program(g, s);
        REQUIRE(program.may_overlap(program.launch_of(1), program.launch_of(2)));
        const PlannedBuffer& b = plan.buffers[size_t(plan.op_places[1].buffer)];
        const PlannedBuffer& c = plan.buffers[size_t(plan.op_places[2].buffer)];
        CHECK_FALSE(bytes_overlap(b, c));
        CHECK(find_memory_conflicts(g, plan, program).empty());
        // Two concurrent convolutions: two workspace slots.
        CHECK(plan.workspace_slots == 2);
        CHECK(plan.workspace_slot[size_t(program.launch_of(1))] !=
              plan.workspace_slot[size_t(program.launch_of(2))]);
    }
    // One after another, the convolutions take turns on one workspace.
    CHECK(plan_memory(g, sequential_schedule(g), options()).workspace_slots == 1);
}

TEST_CASE("audit: two concurrent ops sharing bytes, injected into the plan, are caught",
          "[memory][audit]") {
    const Graph g = test::diamond();
    const Schedule s{{{S{C, {{0}}}}, {S{C, {{1}, {2}}}, S{C, {{3}}}}}};
    MemoryPlan plan = plan_memory(g, s, options());
    const StreamProgram program(g, s);
    REQUIRE_NOTHROW(audit_memory(g, plan, program));
    plan.buffers[size_t(plan.op_places[2].buffer)].offset =
        plan.buffers[size_t(plan.op_places[1].buffer)].offset;
    const auto conflicts = find_memory_conflicts(g, plan, program);
    REQUIRE(conflicts.size() == 1);
    CHECK(conflicts[0].launch_a == program.launch_of(1));
    CHECK(conflicts[0].launch_b == program.launch_of(2));
    CHECK_THROWS_AS(audit_memory(g, plan, program), InternalError);
    CHECK_THROWS_WITH(audit_memory(g, plan, program), Catch::Contains("op 1 'b'") &&
                                                          Catch::Contains("op 2 'c'") &&
                                                          Catch::Contains("output of op 1 'b'") &&
                                                          Catch::Contains("output of op 2 'c'"));
}

TEST_CASE("audit: a plan audited against a schedule that lost a dependency is caught",
          "[memory][audit]") {
    // x is read only by y, and sequentially z is written after y: x and z may share bytes. Run
    // x -> y beside z and they may not.
    Graph g("lost_dependency", Shape{1, 16, 16, 16});
    const int x = g.add(OpKind::Conv, conv(16, 1), {kGraphInput}, "x");
    const int y = g.add(OpKind::Conv, conv(16, 3), {x}, "y");
    const int z = g.add(OpKind::Conv, conv(16, 3), {kGraphInput}, "z");
    g.add(OpKind::Add, AddAttrs{}, {y, z}, "sum");
    const MemoryPlan plan = plan_memory(g, sequential_schedule(g), options());
    const PlannedBuffer& bx = plan.buffers[size_t(plan.op_places[size_t(x)].buffer)];
    const PlannedBuffer& bz = plan.buffers[size_t(plan.op_places[size_t(z)].buffer)];
    REQUIRE(bytes_overlap(bx, bz));  // the sequential order lets them share
    // The same ops with the order between y and z removed: a stage of two groups.
    const Schedule broken{{{S{C, {{x, y}, {z}}}, S{C, {{3}}}}}};
    const StreamProgram program(g, broken);
    CHECK_THROWS_WITH(audit_memory(g, plan, program),
                      Catch::Contains("op 0 'x'") && Catch::Contains("op 2 'z'") &&
                          Catch::Contains("output of op 0 'x'") &&
                          Catch::Contains("output of op 2 'z'") &&
                          Catch::Contains("neither waits for the other"));
}

TEST_CASE("memory plan: models of a set share bytes only when they run one after another",
          "[memory][model_set]") {
    const Graph model = test::diamond();
    const Graph set = combine_models({model, model}, SetInputs::Separate);
    const int n = model.size();
    // Back to back: model 1 starts when model 0 is done, and may take its bytes.
    const MemoryPlan seq = plan_memory(set, sequential_schedule(set), options());
    CHECK(shared_pairs(seq) > 0);
    // Side by side (each model one group of a stage): nothing of one shares with the other.
    std::vector<int> m0, m1;
    for (int i = 0; i < n; ++i) m0.push_back(i), m1.push_back(n + i);
    Schedule side;
    side.blocks = {{S{C, {m0, m1}}}};
    const MemoryPlan par = plan_memory(set, side, options());
    for (int a : m0)
        for (int b : m1) {
            const PlannedBuffer& x = par.buffers[size_t(par.op_places[size_t(a)].buffer)];
            const PlannedBuffer& y = par.buffers[size_t(par.op_places[size_t(b)].buffer)];
            INFO(x.name << " / " << y.name);
            CHECK_FALSE(bytes_overlap(x, y));
        }
    CHECK(find_memory_conflicts(set, par, StreamProgram(set, side)).empty());
    // Each model's output is pinned.
    for (int out : set.outputs())
        CHECK(par.buffers[size_t(par.op_places[size_t(out)].buffer)].pinned);
}

TEST_CASE("memory plan: deterministic, and the I/O region does not depend on the schedule",
          "[memory]") {
    const Graph g = test::inception_like();
    const Schedule greedy{
        {{S{C, {{0}}}},
         {S{C, {{1}, {2}, {4}, {7}}}, S{C, {{3}, {5}, {8}}}, S{C, {{6}}}, S{C, {{9}}}}}};
    const MemoryPlan a = plan_memory(g, greedy, options());
    const MemoryPlan b = plan_memory(g, greedy, options());
    REQUIRE(a.buffers.size() == b.buffers.size());
    for (size_t i = 0; i < a.buffers.size(); ++i) CHECK(a.buffers[i].offset == b.buffers[i].offset);
    CHECK(a.shared_bytes == b.shared_bytes);
    const MemoryPlan seq = plan_memory(g, sequential_schedule(g), options());
    std::vector<std::pair<std::string, int64_t>> io_a, io_s;
    for (const PlannedBuffer& x : a.buffers)
        if (x.pinned) io_a.emplace_back(x.name, x.offset);
    for (const PlannedBuffer& x : seq.buffers)
        if (x.pinned) io_s.emplace_back(x.name, x.offset);
    CHECK(io_a == io_s);
}

TEST_CASE("weight bytes count what the engine uploads", "[memory]") {
    Graph g("weights", Shape{1, 3, 8, 8});
    const int a = g.add(OpKind::Conv, conv(16, 3), {kGraphInput}, "a");  // 16*3*9 + 16
    ConvAttrs dw = conv(16, 3);
    dw.groups = 16;
    const int d = g.add(OpKind::Conv, dw, {a}, "dw");         // 16*1*9 + 16 (+ 16*9 NHWC)
    g.add(OpKind::Linear, LinearAttrs{10, true}, {d}, "fc");  // 10*16*8*8 + 10
    const int64_t base = 16 * 3 * 9 + 16 + 16 * 9 + 16 + 10 * 16 * 64 + 10;
    CHECK(weight_bytes(g, options(Precision::Fp32)) == base * 4);
    CHECK(weight_bytes(g, options(Precision::Fp16, TensorLayout::Nhwc)) == (base + 16 * 9) * 2);
    MemoryPlanOptions padded = options(Precision::Fp16, TensorLayout::Nhwc);
    padded.pad_input_channels = true;  // the stem's filter gets 8 input channels
    CHECK(weight_bytes(g, padded) == (base + 16 * 9 + 16 * 5 * 9) * 2);
}
