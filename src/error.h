// The one exception type every part of iostune throws for failures a user can cause or see.
// Messages say what failed, where, and what to do; the CLI prints them and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace iostune {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace iostune
