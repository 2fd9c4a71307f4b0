#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>

#include "cli/commands.h"
#include "iostune/version.h"
#include "src/error.h"

int main(int argc, char** argv) {
    CLI::App app{"iostune: inter-operator scheduling autotuner for CNN inference on NVIDIA GPUs"};
    app.set_version_flag("--version", fmt::format("iostune {} (commit {}, {} build)",
                                                  iostune::kVersion, iostune::kGitCommit,
                                                  iostune::kBuildType));
    app.require_subcommand(1);
    iostune::cli::add_models_command(app);
    iostune::cli::add_export_command(app);
    iostune::cli::add_show_command(app);
    iostune::cli::add_search_command(app);
    iostune::cli::add_profile_command(app);
    iostune::cli::add_replay_command(app);
    iostune::cli::add_report_command(app);
    iostune::cli::add_import_command(app);
    iostune::cli::add_run_command(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const iostune::Error& e) {
        fmt::print(stderr, "iostune: error: {}\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "iostune: internal error: {}\n", e.what());
        return 2;
    }
    return 0;
}
