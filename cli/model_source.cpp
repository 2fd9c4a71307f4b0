#include "cli/model_source.h"

namespace iostune::cli {

CLI::Option* add_model_option(CLI::App* command, std::string& spec) {
    return command->add_option("-m,--model", spec, kModelOptionHelp)->required();
}

}  // namespace iostune::cli
