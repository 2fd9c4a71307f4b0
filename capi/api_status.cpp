#include "capi/api_status.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "iostune/version.h"
#include "replay/gpu_check.h"

namespace iostune::capi {

namespace {

thread_local std::string last_error;

}  // namespace

iostune_status fail(iostune_status status, const std::string& message) noexcept {
    try {
        last_error = message;
    } catch (...) {
        last_error.clear();  // out of memory for the message itself: at least the status holds
    }
    return status;
}

iostune_status status_of(ErrorKind kind) noexcept {
    switch (kind) {
        case ErrorKind::BadInput: return IOSTUNE_ERROR_BAD_INPUT;
        case ErrorKind::MissingSchedule: return IOSTUNE_ERROR_MISSING_SCHEDULE;
        case ErrorKind::NoGpu: return IOSTUNE_ERROR_NO_GPU;
        case ErrorKind::General: break;
    }
    return IOSTUNE_ERROR;
}

void require(bool ok, const std::string& what) {
    if (!ok) throw Error(what, ErrorKind::BadInput);
}

void require_struct_size(size_t given, size_t expected, const char* name) {
    require(given == expected,
            fmt::format("{}.struct_size is {}, this library's is {}: the program was built "
                        "against another iostune.h; call {}_init() and rebuild against the "
                        "installed header",
                        name, given, expected, name));
}

std::string or_default(const char* text, const char* fallback) {
    return text != nullptr ? std::string(text) : std::string(fallback);
}

char* new_string(const std::string& text) {
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (copy == nullptr) throw std::bad_alloc();
    std::memcpy(copy, text.c_str(), text.size() + 1);
    return copy;
}

}  // namespace iostune::capi

using namespace iostune;

extern "C" {

int iostune_api_version(void) { return IOSTUNE_API_VERSION; }

const char* iostune_version(void) {
    static const std::string version =
        fmt::format("{} (commit {}, {} build)", kVersion, kGitCommit, kBuildType);
    return version.c_str();
}

const char* iostune_last_error(void) { return capi::last_error.c_str(); }

const char* iostune_status_name(iostune_status status) {
    switch (status) {
        case IOSTUNE_OK: return "IOSTUNE_OK";
        case IOSTUNE_ERROR: return "IOSTUNE_ERROR";
        case IOSTUNE_ERROR_BAD_INPUT: return "IOSTUNE_ERROR_BAD_INPUT";
        case IOSTUNE_ERROR_MISSING_SCHEDULE: return "IOSTUNE_ERROR_MISSING_SCHEDULE";
        case IOSTUNE_ERROR_NO_GPU: return "IOSTUNE_ERROR_NO_GPU";
        case IOSTUNE_ERROR_INTERNAL: return "IOSTUNE_ERROR_INTERNAL";
    }
    return "IOSTUNE_UNKNOWN_STATUS";
}

void iostune_free_string(char* text) { std::free(text); }

iostune_status iostune_gpu_check(void) {
    return capi::guarded([] {
        if (const std::string why = gpu_unavailable_reason(); !why.empty())
            throw Error(fmt::format("no NVIDIA GPU can be used on this machine ({}); replay and "
                                    "measured searches need one, `cost=\"sim\"` searches do not",
                                    why),
                        ErrorKind::NoGpu);
    });
}

}  // extern "C"
