// Graphs, schedules and error measures the [gpu] engine tests share.
#pragma once

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/blocks.h"
#include "src/engine/engine.h"
#include "src/schedule.h"
#include "src/tensor.h"

namespace iostune::test {

// A square convolution with "same" padding for test graphs: ConvAttrs with its options named.
struct SameConv {
    int groups = 1;
    bool bias = true, relu = false, residual = false;
    std::optional<ActivationAttrs> activation = std::nullopt;
};
inline ConvAttrs same_conv(int out_channels, int kernel, const SameConv& o = {}) {
    ConvAttrs a;
    a.out_channels = out_channels;
    a.kernel_h = a.kernel_w = kernel;
    a.pad_h = a.pad_w = kernel / 2;
    a.groups = o.groups;
    a.bias = o.bias;
    a.relu = o.relu;
    a.residual = o.residual;
    a.activation = o.activation;
    return a;
}

// Strict fp32 (no tensor cores) still lets cuDNN pick its transform algorithms (Winograd, FFT)
// when they time fastest; a 5x5 convolution through WINOGRAD_NONFUSED erred by 2.9e-4 relative
// on the H100 (2026-11-22), so the bound is 1e-3: ten times tighter than TF32's.
inline constexpr double kFp32Tolerance = 1e-3;
inline constexpr double kTf32Tolerance = 1e-2;

// Relative L2 error bounds of a zoo model's logits against the fp32 CPU reference. One rounding
// of a 16-bit value errs by up to 2^-11 (fp16) or 2^-8 (bf16) relative, and every op rounds its
// output once more. The bounds are twice the largest error PyTorch itself makes in that precision
// (channels-last) on the six zoo models, same weights and input, measured on the H100 by
// scripts/precision_yardstick.py (results/device/precision/): fp16 8.5e-4, bf16 7.6e-3.
inline double model_error_bound(Precision precision) {
    switch (precision) {
        case Precision::Fp32: return kFp32Tolerance;
        case Precision::Tf32: return kTf32Tolerance;
        case Precision::Fp16: return 1.7e-3;
        case Precision::Bf16: return 1.5e-2;
    }
    return 0;
}

// For single ops of a shallow graph (every_op_graph, at most 8 ops deep): a few roundings.
inline double op_error_bound(Precision precision) {
    switch (precision) {
        case Precision::Fp32: return kFp32Tolerance;
        case Precision::Tf32: return kTf32Tolerance;
        case Precision::Fp16: return 5e-3;
        case Precision::Bf16: return 4e-2;
    }
    return 0;
}

// Every op's output kept in bytes of its own under every schedule (EngineOptions::reuse_memory
// off), for tests that compare each op with the CPU reference after a whole run.
inline EngineOptions every_output_kept(EngineOptions options) {
    options.reuse_memory = false;
    return options;
}

inline EngineOptions options_with(Precision precision) {
    EngineOptions options;
    options.precision = precision;
    return options;
}

// One precision and layout plan of the engine.
struct Plan {
    Precision precision;
    TensorLayout layout;
};

// Every precision in both layouts.
inline const std::vector<Plan>& every_plan() {
    static const std::vector<Plan> plans = {
        {Precision::Fp32, TensorLayout::Nchw}, {Precision::Fp32, TensorLayout::Nhwc},
        {Precision::Tf32, TensorLayout::Nchw}, {Precision::Tf32, TensorLayout::Nhwc},
        {Precision::Fp16, TensorLayout::Nchw}, {Precision::Fp16, TensorLayout::Nhwc},
        {Precision::Bf16, TensorLayout::Nchw}, {Precision::Bf16, TensorLayout::Nhwc}};
    return plans;
}

inline std::string label(const Plan& plan) {
    return fmt::format("{} {}", to_string(plan.precision), to_string(plan.layout));
}

inline EngineOptions options_for(const Plan& plan) {
    EngineOptions options;
    options.precision = plan.precision;
    options.layout = plan.layout;
    return options;
}

// Every bit the same (same kernels, same order of additions).
inline bool bitwise_equal(const HostTensor& a, const HostTensor& b) {
    return a.shape == b.shape &&
           std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

// ||out - ref|| / ||ref||
inline double relative_error(const HostTensor& out, const HostTensor& ref) {
    REQUIRE(out.shape == ref.shape);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < ref.data.size(); ++i) {
        const double d = double(out.data[i]) - double(ref.data[i]);
        diff += d * d;
        norm += double(ref.data[i]) * double(ref.data[i]);
    }
    return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// Every op kind and the engine's special paths: a concat reading the graph input (copied) and
// producers written in place, mergeable 1x1/3x3/5x5 heads, grouped conv, both SepConv forms,
// 3-input add, cuDNN pooling and ceil_mode pooling, global pools, linear, softmax.
inline Graph every_op_graph(int batch) {
    Graph g("every_op", Shape{batch, 3, 33, 33});
    const int pre = g.add(OpKind::Conv, ConvAttrs{5, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true},
                          {kGraphInput}, "pre3x3");
    const int cat0 = g.add(OpKind::Concat, ConcatAttrs{}, {kGraphInput, pre}, "cat_input");
    const int stem = g.add(OpKind::Conv, ConvAttrs{16, 3, 3, 2, 2, 1, 1, 1, 1, 1, true, true},
                           {cat0}, "stem");  // 17x17
    const int h1 = g.add(OpKind::Conv, ConvAttrs{8, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, true}, {stem},
                         "head1x1");
    const int h3 = g.add(OpKind::Conv, ConvAttrs{12, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true}, {stem},
                         "head3x3");
    const int h5 = g.add(OpKind::Conv, ConvAttrs{4, 5, 5, 1, 1, 2, 2, 1, 1, 1, true, true}, {stem},
                         "head5x5");
    const int pmax = g.add(OpKind::MaxPool, PoolAttrs{3, 3, 1, 1, 1, 1, false, true, false}, {stem},
                           "maxpool3x3");
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {h1, h3, h5, pmax}, "cat_heads");  // 40
    const int grouped = g.add(OpKind::Conv, ConvAttrs{40, 3, 3, 1, 1, 1, 1, 1, 1, 4, false, false},
                              {cat}, "grouped3x3");
    const int sep = g.add(OpKind::SepConv, SepConvAttrs{24, 5, 1, 2, 1, true, true}, {cat},
                          "sep5x5");
    const int sep_dil = g.add(OpKind::SepConv, SepConvAttrs{24, 3, 1, 2, 2, false, false}, {cat},
                              "sep3x3_dilated");
    const int proj = g.add(OpKind::Conv, ConvAttrs{24, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, false},
                           {cat}, "proj1x1");
    const int proj3 = g.add(OpKind::Conv, ConvAttrs{24, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, false},
                            {cat}, "proj3x3");
    const int add = g.add(OpKind::Add, AddAttrs{true}, {sep, sep_dil, proj, proj3}, "add4_relu");
    const int relu = g.add(OpKind::Relu, ReluAttrs{}, {grouped}, "relu");
    const int ident = g.add(OpKind::Identity, IdentityAttrs{}, {relu}, "identity");
    const int pceil = g.add(OpKind::MaxPool, PoolAttrs{2, 2, 2, 2, 0, 0, true, true, false}, {add},
                            "maxpool_ceil");  // 9x9
    const int aceil = g.add(OpKind::AvgPool, PoolAttrs{2, 2, 2, 2, 0, 0, true, true, false}, {ident},
                            "avgpool_ceil");  // 9x9
    const int aexcl = g.add(OpKind::AvgPool, PoolAttrs{3, 3, 1, 1, 1, 1, false, false, false},
                            {ident}, "avgpool_exclude_pad");  // 17x17
    const int cat2 = g.add(OpKind::Concat, ConcatAttrs{}, {pceil, aceil}, "cat_pools");  // 64
    const int gap = g.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {cat2},
                          "global_avg");
    const int gmax = g.add(OpKind::MaxPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {aexcl},
                           "global_max");
    const int cat3 = g.add(OpKind::Concat, ConcatAttrs{}, {gap, gmax}, "cat_global");  // 104
    const int fc = g.add(OpKind::Linear, LinearAttrs{10, true}, {cat3}, "fc");
    g.add(OpKind::Softmax, SoftmaxAttrs{}, {fc}, "softmax");
    return g;
}

// Per block, every ready op in one stage, each its own group (a greedy-like concurrent schedule).
inline Schedule greedy_schedule(const Graph& graph) {
    Schedule schedule;
    std::vector<bool> done(size_t(graph.size()), false);
    for (const Block& block : partition_blocks(graph)) {
        std::vector<int> left = block.ops;
        std::vector<Stage> stages;
        while (!left.empty()) {
            Stage stage;
            std::vector<int> rest;
            for (int id : left) {
                const auto& in = graph.op(id).inputs;
                const bool ready = std::all_of(in.begin(), in.end(), [&](int i) {
                    return i == kGraphInput || done[size_t(i)];
                });
                if (ready) {
                    stage.groups.push_back({id});
                } else {
                    rest.push_back(id);
                }
            }
            REQUIRE(!stage.groups.empty());
            for (const auto& group : stage.groups) done[size_t(group[0])] = true;
            stages.push_back(std::move(stage));
            left = std::move(rest);
        }
        schedule.blocks.push_back(std::move(stages));
    }
    return schedule;
}

// The greedy schedule with, in each stage, the convolutions that read one tensor and may merge
// pulled out into a merge stage run just before the rest of that stage.
inline Schedule merged_schedule(const Graph& graph, int* merge_count) {
    Schedule schedule = greedy_schedule(graph);
    *merge_count = 0;
    for (auto& block : schedule.blocks) {
        std::vector<Stage> stages;
        for (const Stage& stage : block) {
            std::map<int, std::vector<int>> convs_by_input;
            for (const auto& group : stage.groups) {
                const Op& op = graph.op(group[0]);
                if (op.kind == OpKind::Conv) convs_by_input[op.inputs[0]].push_back(op.id);
            }
            std::vector<int> merged;
            for (const auto& [input, convs] : convs_by_input) {
                for (size_t seed = 0; seed < convs.size(); ++seed) {
                    if (std::find(merged.begin(), merged.end(), convs[seed]) != merged.end()) continue;
                    std::vector<int> set{convs[seed]};
                    for (size_t k = seed + 1; k < convs.size(); ++k) {
                        std::vector<int> bigger = set;
                        bigger.push_back(convs[k]);
                        if (std::find(merged.begin(), merged.end(), convs[k]) == merged.end() &&
                            can_merge(graph, bigger))
                            set = std::move(bigger);
                    }
                    if (set.size() < 2) continue;
                    stages.push_back(Stage{StageStrategy::Merge, {set}});
                    merged.insert(merged.end(), set.begin(), set.end());
                    ++*merge_count;
                }
            }
            Stage rest;
            for (const auto& group : stage.groups)
                if (std::find(merged.begin(), merged.end(), group[0]) == merged.end())
                    rest.groups.push_back(group);
            if (!rest.groups.empty()) stages.push_back(std::move(rest));
        }
        block = std::move(stages);
    }
    return schedule;
}

inline HostTensor run_schedule(Engine& engine, const Schedule& schedule) {
    engine.prepare(schedule);
    engine.launch_schedule(schedule, engine.origin_stream());
    return engine.read_output();
}

inline std::string plan_summary(const Engine& engine) {
    std::map<std::string, int> paths;
    int in_place = 0;
    for (const OpPlan& p : engine.op_plans()) {
        if (p.kind == OpKind::Conv) ++paths[p.path];
        if (p.writes_into_concat) ++in_place;
    }
    std::string text = fmt::format("{} ops write into their concat slice; conv paths:", in_place);
    for (const auto& [path, count] : paths) text += fmt::format(" [{}] x{}", path, count);
    return text;
}

}  // namespace iostune::test
