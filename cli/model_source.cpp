#include "cli/model_source.h"

namespace iostune::cli {

CLI::Option* add_model_option(CLI::App* command, std::string& spec) {
    return command->add_option("-m,--model", spec, kModelOptionHelp)->required();
}

void add_model_set_options(CLI::App* command, ModelSetChoice& choice) {
    command
        ->add_option("-m,--model", choice.specs,
                     std::string(kModelOptionHelp) +
                         "; give it several times for a model set, searched and replayed as one "
                         "(the same model may appear twice)")
        ->required()
        ->take_all()
        ->expected(1);
    command->add_flag("--shared-input", choice.shared_input,
                      "a model set whose models all read one input (an ensemble, variants of one "
                      "model); without it each model has its own input");
}

}  // namespace iostune::cli
