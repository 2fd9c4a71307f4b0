#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "iostune/version.h"
#include "src/error.h"
#include "src/quoted.h"

namespace {

// Exit statuses (docs/cli.md, "Exit codes"): 0 success (also --help and --version), 1 an error the
// user can fix in the input, files, database or machine, 2 a command line iostune could not
// parse, 3 a bug in iostune.
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 3;

// A command line CLI11 rejected (unknown option, missing required option, bad value): the same
// one-line "iostune: error:" shape as every other failure, and the --help of the command that
// was being parsed, instead of CLI11's own text and its 105/106/109... statuses.
int usage_error(const CLI::App& app, const CLI::ParseError& e) {
    std::string command = "iostune";
    const std::vector<CLI::App*> parsed = app.get_subcommands();
    if (!parsed.empty()) command += " " + parsed.back()->get_name();
    fmt::print(stderr, "iostune: error: {}\nrun '{} --help' for usage\n", e.what(), command);
    return kExitUsage;
}

}  // namespace

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
    iostune::cli::add_tune_command(app);
    iostune::cli::add_db_command(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help, --help-all and --version arrive here too, with status 0: CLI11 prints them.
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
        return usage_error(app, e);
    } catch (const iostune::Error& e) {
        // Printable, so that whatever a model file put in a name, the message is one line.
        fmt::print(stderr, "iostune: error: {}\n", iostune::printable(e.what()));
        return kExitError;
    } catch (const std::bad_alloc&) {
        // The machine's limit, not a bug: the memory checks before a run refuse what they can
        // foresee, and the places that allocate by the model's sizes say what they were doing.
        fmt::print(stderr, "iostune: error: out of host memory; use a smaller batch or model, or "
                           "a machine with more memory\n");
        return kExitError;
    } catch (const std::exception& e) {
        fmt::print(stderr, "iostune: internal error: {}\n", iostune::printable(e.what()));
        return kExitInternal;
    }
    return 0;
}
