#include "cli/precision_options.h"

#include <vector>

#include "src/precision.h"

namespace iostune::cli {

CLI::Option* add_precision_option(CLI::App* command, std::string& precision,
                                  const std::string& help) {
    return command
        ->add_option("--precision,--math", precision,
                     help + ": fp32 (strict), tf32 (fp32 storage, TF32 tensor cores, like "
                            "PyTorch), fp16 or bf16 (16-bit storage, fp32 accumulation)")
        ->check(CLI::IsMember(std::vector<std::string>(precision_names(),
                                                       precision_names() + kPrecisionCount)))
        ->capture_default_str();
}

CLI::Option* add_layout_option(CLI::App* command, std::string& layout, const std::string& help) {
    return command->add_option("--layout", layout, help)
        ->check(CLI::IsMember({"auto", "nchw", "nhwc"}))
        ->capture_default_str();
}

std::optional<TensorLayout> layout_choice(const std::string& name) {
    if (name == "auto") return std::nullopt;
    return tensor_layout_from_string(name);
}

}  // namespace iostune::cli
