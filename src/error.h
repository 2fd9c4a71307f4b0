// The one exception type every part of iostune throws for failures a user can cause or see.
// Messages say what failed, where, and what to do; the CLI prints them and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace iostune {

// What kind of failure it is, for callers that act on it (the C API's status codes and the
// Python package's exception classes); the CLI treats every kind alike (exit code 1).
enum class ErrorKind {
    General,          // a file, the schedule database, CUDA, memory: see the message
    BadInput,         // a model, option or argument the caller gave (unknown, malformed, wrong)
    MissingSchedule,  // no stored schedule may run for this model, batch, precision and GPU
    NoGpu,            // this needs an NVIDIA GPU and the machine has none usable
};

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message, ErrorKind kind = ErrorKind::General)
        : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const noexcept { return kind_; }

private:
    ErrorKind kind_;
};

}  // namespace iostune
