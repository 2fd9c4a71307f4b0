// Each file cli/<name>_command.cpp adds one subcommand to the app. Subcommands only parse
// arguments, call a library and print; errors are thrown as iostune::Error and turned into a
// message and exit code 1 by main().
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace iostune::cli {

void add_models_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_show_command(CLI::App& app);
void add_search_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_db_command(CLI::App& app);

// Parses `args` ("search", then its options) as `iostune search` does, running nothing; throws
// CLI::ParseError as the command line would fail. `iostune tune` checks a plan's keys with it.
void check_search_arguments(std::vector<std::string> args);

}  // namespace iostune::cli
