#include "src/engine/planning_pace.h"

#include <limits>

namespace iostune {

double projected_planning_seconds(double elapsed_s, int planned, int total) {
    if (planned <= 0) return std::numeric_limits<double>::infinity();
    return elapsed_s * double(total) / double(planned);
}

bool planning_cannot_finish(double elapsed_s, double allowed_s, int planned, int total) {
    // No time given at all (a deadline already past): only the deadline itself stops planning,
    // so that choices needing no timing (cached, pinned) still plan.
    if (allowed_s <= 0 || total <= 0 || planned >= total || elapsed_s < allowed_s / 2)
        return false;
    return projected_planning_seconds(elapsed_s, planned, total) > 2 * allowed_s;
}

}  // namespace iostune
