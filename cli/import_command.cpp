// `iostune import`: converts an ONNX model into the iostune JSON model format with its
// initializers (batch norm folded) as the weights file.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/positive_number.h"
#include "src/model_json.h"
#include "src/onnx/onnx_import.h"
#include "src/operator_info.h"

namespace iostune::cli {

namespace {

struct ImportOptions {
    std::string onnx;
    std::string output;
    std::string weights;
    int batch = 1;
};

void run_import(const ImportOptions& o) {
    const Graph graph = import_onnx_file(o.onnx, {o.batch, ""});
    // The weights are what makes an imported model worth having: write them unless asked where.
    const std::string weights =
        o.weights.empty() ? std::filesystem::path(o.output).replace_extension(".bin").string()
                          : o.weights;
    save_model(graph, o.output, weights);
    const GraphTotals t = totals(graph);
    const auto shape = [](const Shape& s) {
        return fmt::format("{}x{}x{}x{}", s.n, s.c, s.h, s.w);
    };
    std::vector<std::string> outputs;  // every one: a detector backbone returns one per level
    for (int id : graph.outputs()) outputs.push_back(shape(graph.op(id).output));
    fmt::print("imported {}: {} ops, input {}, output{} {}, fingerprint {}\n", o.onnx,
               graph.size(), shape(graph.input_shape()), outputs.size() > 1 ? "s" : "",
               fmt::join(outputs, " + "), fingerprint(graph));
    fmt::print("wrote {}\nwrote {} ({} float32 parameters from the ONNX initializers)\n", o.output,
               weights, t.params);
}

}  // namespace

void add_import_command(CLI::App& app) {
    auto o = std::make_shared<ImportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "import", "Import an ONNX model (as torchvision exports it) into the iostune JSON format");
    cmd->add_option("onnx", o->onnx, "ONNX model file (.onnx)")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("-o,--output", o->output, "model file to write (.json)")->required();
    cmd->add_option("-w,--weights", o->weights,
                    "raw float32 weights file to write (default: the output path with .bin)");
    cmd->add_option("-b,--batch", o->batch, "batch size for a symbolic batch dimension")
        ->check(positive_whole_number());
    cmd->callback([o] { run_import(*o); });
}

}  // namespace iostune::cli
