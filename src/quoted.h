// Names from model files (node, tensor and input names, op types, attribute values) as error
// messages quote them: a file may hold any bytes there, and a message must stay one readable
// line that is safe to print on a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace iostune {

// Longest quoted text, in printed characters, before the rest is cut.
constexpr size_t kQuotedMaxChars = 80;

// `text` in single quotes, printable ASCII kept and every other byte (control characters, NUL,
// escape sequences, bytes of UTF-8) written as \xNN, a backslash as \\; past kQuotedMaxChars
// printed characters it is cut and "... (N bytes)" says how long it was.
std::string quoted_name(std::string_view text);

// The same without the quotes, for a name set off otherwise ("(Conv, opset 13)").
std::string escaped_name(std::string_view text);

// A whole message made safe for a terminal: every byte outside printable ASCII as \xNN but the
// line breaks iostune's own listings use (backslashes kept as they are, so what quoted_name()
// escaped is not escaped twice). The CLI's last defence for text quoted_name() did not reach.
std::string printable(std::string_view message);

}  // namespace iostune
