// SecondsAdder: the planner's per-kind seconds must count every way out of a timed scope.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <thread>

#include "src/stopwatch.h"

using namespace iostune;

namespace {

void sleep_then(double& total, bool throw_out) {
    const SecondsAdder counted(total);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (throw_out) throw std::runtime_error("out early");
}

}  // namespace

TEST_CASE("SecondsAdder adds its scope's seconds on a return and on an exception", "[stopwatch]") {
    double total = 1.0;
    sleep_then(total, false);
    CHECK(total >= 1.019);
    CHECK(total < 2.0);
    const double after_return = total;
    CHECK_THROWS_AS(sleep_then(total, true), std::runtime_error);
    CHECK(total >= after_return + 0.019);
}
