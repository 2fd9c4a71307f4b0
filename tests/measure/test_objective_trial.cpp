// Whether the search tries another convolution objective (tuning/objective_trial.h): pure
// logic, no GPU.
#include <catch2/catch.hpp>

#include <limits>

#include "tuning/objective_trial.h"

using namespace iostune;

TEST_CASE("another objective is tried only while four trials' time is left",
          "[measure][objective]") {
    // NASNet-A b16 in call122 (its trials were not timed one by one): some 15 s left after a
    // trial of about 6.5 s; the second trial, the refinement and the final timings ran 5.3 s
    // past the budget.
    CHECK_FALSE(another_objective_fits(15.0, 6.5));
    // Its rerun on 0c357f1 (three trials' time then): 15.7 s left after a 4.9 s trial, tried,
    // and 1.3 s past the budget.
    CHECK_FALSE(another_objective_fits(15.7, 4.9));
    // A batch-1 key: a trial of a few seconds, most of 20 s left.
    CHECK(another_objective_fits(19.0, 2.5));
    CHECK(another_objective_fits(26.4, 6.6));
    CHECK_FALSE(another_objective_fits(26.3, 6.6));
    CHECK_FALSE(another_objective_fits(-1.0, 0.5));  // the budget is already spent
    CHECK(another_objective_fits(std::numeric_limits<double>::infinity(), 30.0));  // no budget
    CHECK(another_objective_fits(0.0, 0.0));  // before any trial
}
