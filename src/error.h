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

// A broken invariant of iostune itself (a bug, never the user's doing), such as a memory plan
// that lets two concurrent launches touch the same bytes. Deliberately not an Error: no caller
// may take it for a stage or schedule that merely cannot run; the CLI reports it as an internal
// error (exit code 3).
class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

}  // namespace iostune
