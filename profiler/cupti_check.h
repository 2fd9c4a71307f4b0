// Checks a CUPTI call and throws iostune::Error with the call, CUPTI's message and context.
#pragma once

#include <cupti.h>
#include <fmt/format.h>

#include "src/error.h"

#define IOSTUNE_CUPTI_CHECK(call, context)                                                      \
    do {                                                                                        \
        const CUptiResult iostune_cupti_status_ = (call);                                       \
        if (iostune_cupti_status_ != CUPTI_SUCCESS) {                                           \
            const char* iostune_cupti_msg_ = nullptr;                                           \
            cuptiGetResultString(iostune_cupti_status_, &iostune_cupti_msg_);                   \
            throw ::iostune::Error(fmt::format("{}: {} failed: {} ({}:{})", (context), #call,   \
                                               iostune_cupti_msg_ ? iostune_cupti_msg_ : "?",   \
                                               __FILE__, __LINE__));                            \
        }                                                                                       \
    } while (0)
