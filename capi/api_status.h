// How the C API reports failures: every exported function runs its body through guarded(),
// which turns each exception into an iostune_status and keeps the message for
// iostune_last_error() (per thread), so no C++ exception ever crosses the C boundary.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "iostune/iostune.h"
#include "src/error.h"

namespace iostune::capi {

// Keeps `message` as this thread's last error and returns `status`.
iostune_status fail(iostune_status status, const std::string& message) noexcept;
iostune_status status_of(ErrorKind kind) noexcept;

template <class Body>
iostune_status guarded(Body&& body) noexcept {
    try {
        body();
        return IOSTUNE_OK;
    } catch (const Error& e) {
        return fail(status_of(e.kind()), e.what());
    } catch (const std::bad_alloc&) {
        return fail(IOSTUNE_ERROR, "out of host memory");
    } catch (const std::exception& e) {
        return fail(IOSTUNE_ERROR_INTERNAL, std::string("internal error: ") + e.what());
    } catch (...) {
        return fail(IOSTUNE_ERROR_INTERNAL, "internal error: an unknown exception");
    }
}

// The caller's options and arguments: a general failure while `parse` reads them (an unknown
// precision, strategy or layout name) is the caller's bad input.
template <class Parse>
auto parse_input(Parse&& parse) {
    try {
        return parse();
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::General) throw;
        throw Error(e.what(), ErrorKind::BadInput);
    }
}

// Throws a bad-input Error saying `what` when `ok` is false (a NULL handle or pointer, an
// option struct of another size).
void require(bool ok, const std::string& what);
// The struct_size check of an option struct: a caller built against another iostune.h.
void require_struct_size(size_t given, size_t expected, const char* name);

// `text` or `fallback` when NULL.
std::string or_default(const char* text, const char* fallback);
// A malloc'd copy for a `char**` out-parameter (freed by iostune_free_string).
char* new_string(const std::string& text);

}  // namespace iostune::capi
