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

// A broken invariant of iostune itself (a bug, never the user's doing), such as a memory plan
// that lets two concurrent launches touch the same bytes. Deliberately not an Error: no caller
// may take it for a stage or schedule that merely cannot run; the CLI reports it as an internal
// error (exit code 3).
class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

}  // namespace iostune
