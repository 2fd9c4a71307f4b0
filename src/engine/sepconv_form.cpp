// How a channels-last separable convolution runs: its two convolution steps (each with the kernel
// conv_planner.cpp chose for it) one after the other, or the engine's fused kernel
// (sepconv_kernel.cu) with one of its tiles. Like a convolution's kernel, the form is timed
// alone with a cold L2 (the steps as they run, staging copies included, against each tile that
// fits), shared by the process's engines per signature, stored with a schedule and pinned by its
// replay, and offered to the search's kernel moves with its runners-up, so that where the
// schedule runs the op beside others the other form can still win (docs/search-log.md,
// "Separable convolutions in one kernel").
#include <fmt/format.h>

#include <algorithm>

#include "src/engine/choice_cache.h"
#include "src/engine/engine_impl.h"
#include "src/stopwatch.h"

namespace iostune {

using engine_internal::op_label;

namespace {

ConvChoice form_choice(const std::string& algorithm, double time_ms) {
    return ConvChoice{algorithm, "FMA_MATH", kSepConvPath, time_ms};
}

std::string tile_name(const SepConvTile& tile) {
    return fmt::format("{}{}x{}", kSepConvFusedPrefix, tile.pixels, tile.channels);
}

}  // namespace

SepConvLaunch Engine::Impl::sepconv_launch(const Op& op, const SepConvTile& tile) const {
    const auto& a = op.as<SepConvAttrs>();
    const OpWeights& w = weights_of(op.id);
    SepConvLaunch launch;
    launch.in = tensor(op.inputs.at(0));
    launch.out = views[size_t(op.id)];
    launch.depthwise_weight = w.depthwise.get();
    launch.pointwise_weight = w.weight2.get();
    launch.bias = a.bias ? w.bias.get() : nullptr;
    launch.geometry = DepthwiseGeometry{a.kernel, a.kernel, a.stride, a.stride,
                                        a.pad,    a.pad,    a.dilation, a.dilation};
    launch.relu_input = a.pre_relu;
    launch.relu_output = a.post_relu;
    launch.tile = tile;
    return launch;
}

bool Engine::Impl::configure_form(const Op& op, SepConvForm& form, const ConvChoice& choice) const {
    if (choice.path != kSepConvPath) return false;
    if (choice.algorithm == kSepConvSteps) {
        form.fused.reset();
    } else {
        const auto [pixels, channels] = sepconv_fused_tile(choice.algorithm);
        const SepConvTile tile{pixels, channels};
        const std::vector<SepConvTile> known = sepconv_tiles();
        if (std::find(known.begin(), known.end(), tile) == known.end() ||
            !sepconv_fits(tile, tensor(op.inputs.at(0)).c, dtype))
            return false;
        form.fused = tile;
    }
    form.choice = choice;
    return true;
}

void Engine::Impl::plan_sepconv_form(const Op& op, OpExec& exec) {
    exec.sepconv.reset();
    if (layout != TensorLayout::Nhwc || op.kind != OpKind::SepConv || exec.convs.size() != 2)
        return;
    const ConvStep& depthwise = exec.convs[0];
    const ConvStep& pointwise = exec.convs[1];
    SepConvForm form;
    form.signature = fmt::format("sepconv|{}|then|{}", depthwise.signature, pointwise.signature);
    const ConvChoice steps = form_choice(kSepConvSteps, 0.0);
    const auto done = [&](SepConvForm& chosen) { exec.sepconv = std::move(chosen); };

    if (const auto it = options.conv_choices.find(form.signature);
        it != options.conv_choices.end() && configure_form(op, form, it->second)) {
        form.pinned = true;
        form.candidates = "pinned";
        return done(form);
    }
    const std::string key = fmt::format("dev{}|{}{}", options.device, form.signature,
                                        options.conv_objective == ConvObjective::Alone ? ""
                                                                                       : "|corun");
    if (auto earlier = ChoiceCache::instance().find(key);
        earlier && configure_form(op, form, earlier->choice)) {
        form.candidates = "cached in this process";
        form.runners_up = earlier->runners_up;
        return done(form);
    }
    if (options.time_convolutions_by && !options.choose_by &&
        SteadyClock::now() > *options.time_convolutions_by) {
        // In a hurry: the steps, already chosen; a later search times the form in full.
        configure_form(op, form, steps);
        form.choice.objective = options.conv_objective;
        form.choice.quick = true;
        form.candidates = "quick (past the time for choosing kernels): the steps";
        return done(form);
    }
    require_planning_time(depthwise.context);

    // The two steps as run_op runs them, then each tile that fits.
    cudnnHandle_t handle = lanes[0]->cudnn.get();
    DeviceBuffer workspace;
    std::vector<ConvChoice> ran;
    ran.push_back(steps);
    ran.back().time_ms = time_launch(
        [&](cudaStream_t s, void* w) {
            depthwise.run(handle, w, s);
            pointwise.run(handle, w, s);
        },
        std::max(depthwise.workspace_bytes, pointwise.workspace_bytes), workspace,
        op_label(op) + " (its two steps)");
    for (const SepConvTile& tile : sepconv_tiles()) {
        if (!sepconv_fits(tile, tensor(op.inputs.at(0)).c, dtype)) continue;
        const SepConvLaunch launch = sepconv_launch(op, tile);
        ran.push_back(form_choice(tile_name(tile), 0.0));
        ran.back().time_ms = time_launch(
            [&](cudaStream_t s, void*) { launch_sepconv_nhwc(launch, s); }, 0, workspace,
            op_label(op) + " (fused, " + tile_name(tile) + ")");
    }
    ConvChoice fastest = *std::min_element(
        ran.begin(), ran.end(),
        [](const ConvChoice& a, const ConvChoice& b) { return a.time_ms < b.time_ms; });
    fastest.objective = options.conv_objective;
    for (const ConvChoice& c : ran)
        form.candidates += fmt::format("{}{} {:.4f} ms", form.candidates.empty() ? "" : ", ",
                                       c.algorithm, c.time_ms);
    if (!configure_form(op, form, fastest))
        throw InternalError(fmt::format("{}: its fastest form {} does not run after timing; "
                                        "please report it with the model",
                                        op_label(op), fastest.algorithm));
    form.runners_up = runners_up(ran, fastest, kMostRunnersUp);
    for (ConvChoice& c : form.runners_up) c.objective = options.conv_objective;
    ChoiceCache::instance().store(key, {form.choice, form.runners_up});
    done(form);
}

void Engine::Impl::record_convs(OpExec& exec) {
    const bool fused = exec.sepconv && exec.sepconv->fused;
    for (const ConvStep& s : exec.convs) {
        if (!fused) record_conv(exec.plan, s);
        // Not run while fused, but a kernel move may switch the form back.
        workspace_bytes = std::max(workspace_bytes, s.workspace_bytes);
    }
    if (!exec.sepconv) return;
    const SepConvForm& form = *exec.sepconv;
    OpPlan& plan = exec.plan;
    const std::string what =
        fused ? fmt::format("fused separable convolution kernel ({}x{} tile)", form.fused->pixels,
                            form.fused->channels)
              : std::string("the two steps");
    plan.path += (plan.path.empty() ? "" : "; ") + what;
    plan.algorithms += (plan.algorithms.empty() ? "" : "; ") + form.choice.algorithm;
    plan.candidates += (plan.candidates.empty() ? "" : " || ") + ("form: " + form.candidates);
    plan.conv_signatures.push_back(form.signature);
}

}  // namespace iostune
