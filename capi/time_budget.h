// The search's time budget, wired where this build's search has one. Another change adds
// `SearchOptions::time_budget_s` (`iostune search --time-budget`); until it is merged the
// budget is accepted and reported as ignored. The check is made at compile time on the field
// itself, so the C API and the Python package pass the budget through as soon as it exists,
// with no edit here (tests/capi checks which of the two this build does).
#pragma once

#include "tuning/tuning_job.h"

namespace iostune::capi {

template <class Options>
constexpr bool search_has_time_budget() {
    return requires(Options o) { o.search.time_budget_s = 1.0; } ||
           requires(Options o) { o.time_budget_s = 1.0; };
}

// Sets the budget (seconds, > 0) on `options`; false when this build's search has none.
template <class Options>
bool set_time_budget(Options& options, double seconds) {
    if constexpr (requires { options.search.time_budget_s = seconds; }) {
        options.search.time_budget_s = seconds;
        return true;
    } else if constexpr (requires { options.time_budget_s = seconds; }) {
        options.time_budget_s = seconds;
        return true;
    } else {
        return false;
    }
}

}  // namespace iostune::capi
