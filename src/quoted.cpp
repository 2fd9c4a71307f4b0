#include "src/quoted.h"

#include <fmt/format.h>

#include <utility>

namespace iostune {

namespace {

bool is_printable(unsigned char byte) { return byte >= 0x20 && byte < 0x7f; }

std::string escape_byte(unsigned char byte) { return fmt::format("\\x{:02x}", byte); }

// The printable form of `text` cut to kQuotedMaxChars characters, and whether it was cut.
std::pair<std::string, bool> cut_escaped(std::string_view text) {
    std::string body;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        const std::string piece = byte == '\\'         ? std::string("\\\\")
                                  : is_printable(byte) ? std::string(1, c)
                                                       : escape_byte(byte);
        if (body.size() + piece.size() > kQuotedMaxChars) return {body, true};
        body += piece;
    }
    return {body, false};
}

}  // namespace

std::string quoted_name(std::string_view text) {
    const auto [body, cut] = cut_escaped(text);
    if (!cut) return fmt::format("'{}'", body);
    return fmt::format("'{}'... ({} bytes)", body, text.size());
}

std::string escaped_name(std::string_view text) {
    const auto [body, cut] = cut_escaped(text);
    if (!cut) return body;
    return fmt::format("{}... ({} bytes)", body, text.size());
}

std::string printable(std::string_view message) {
    std::string out;
    out.reserve(message.size());
    for (const char c : message) {
        const auto byte = static_cast<unsigned char>(c);
        if (is_printable(byte) || c == '\n') out += c;
        else out += escape_byte(byte);
    }
    return out;
}

}  // namespace iostune
