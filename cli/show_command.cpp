// `iostune show`: a summary of one model (a model file or a zoo name).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/positive_number.h"
#include "src/fusion.h"
#include "src/model_summary.h"

namespace iostune::cli {

namespace {

struct ShowOptions {
    std::string model;
    int batch = 1;
};

std::string describe_weights(WeightsState state, int64_t params) {
    switch (state) {
        case WeightsState::Absent: return "none (structure only)";
        case WeightsState::SeededRandom: return fmt::format("seeded random ({} values)", params);
        case WeightsState::Loaded: return fmt::format("loaded from the weights file ({} values)", params);
    }
    return "?";
}

void run_show(const ShowOptions& options) {
    // Summarised as search and replay run it: fused.
    const FusedGraph fused =
        fuse_epilogues(load_model_spec(options.model, options.batch, Fusion::None));
    const FusionCounts& f = fused.counts;
    const ModelSummary s = summarize(fused.graph);
    std::vector<std::string> kinds;
    for (const auto& [kind, count] : s.ops_by_kind) kinds.push_back(fmt::format("{} {}", to_string(kind), count));
    fmt::print("{:<12} {}\n", "model", s.name);
    fmt::print("{:<12} {} x {} x {} (C x H x W), batch {}\n", "input", s.input.c, s.input.h, s.input.w,
               s.input.n);
    fmt::print("{:<12} {} ({})\n", "ops", s.ops, fmt::join(kinds, ", "));
    fmt::print("{:<12} {} ops into their producers (conv+relu {}, conv+activation {}, "
               "conv+prelu {}, add+relu {}, conv+add {}, add+add {})\n",
               "fused", f.total(), f.conv_relu, f.conv_activation, f.conv_prelu, f.add_relu,
               f.conv_add, f.add_add);
    fmt::print("{:<12} {}\n", "blocks", s.blocks);
    fmt::print("{:<12} {} ops, width {}\n", "largest", s.largest_block_ops, s.largest_block_width);
    fmt::print("{:<12} {:.3f} (batch {})\n", "GFLOPs", s.gflops, s.input.n);
    fmt::print("{:<12} {} ({:.2f} M)\n", "params", s.params, double(s.params) / 1e6);
    fmt::print("{:<12} {}\n", "fingerprint", s.fingerprint);
    fmt::print("{:<12} {}\n", "weights", describe_weights(s.weights, s.params));
}

}  // namespace

void add_show_command(CLI::App& app) {
    auto options = std::make_shared<ShowOptions>();
    CLI::App* cmd = app.add_subcommand("show", "Summarise a model: structure, blocks, cost, fingerprint");
    cmd->add_option("model", options->model, kModelOptionHelp)->required();
    cmd->add_option("-b,--batch", options->batch, "batch size for the GFLOPs figure")
        ->check(positive_whole_number())
        ->capture_default_str();
    cmd->callback([options] { run_show(*options); });
}

}  // namespace iostune::cli
