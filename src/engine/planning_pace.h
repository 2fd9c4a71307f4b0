// A probe engine (the search's layout choice: EngineOptions::choose_by) stops at its deadline.
// Where it cannot come near it, waiting for the deadline wastes the budget: NASNet-A's and
// RandWire's NCHW probes need about 165 and 55 s to choose their convolutions (call90) and spent
// their whole 9 s of a 60 s budget in every search (calls 121-122). Judged by its pace, such a
// probe stops at half its time.
#pragma once

namespace iostune {

// Whether planning `total` convolutions cannot finish in `allowed_s`: once half of it has
// passed (`elapsed_s`), it would need more than twice `allowed_s` at the pace of the `planned`
// so far. (Twice: later convolutions are often of shapes chosen before, and cost nothing.)
// False when no time was given (`allowed_s` <= 0): the deadline alone rules then.
bool planning_cannot_finish(double elapsed_s, double allowed_s, int planned, int total);

// The seconds planning `total` convolutions takes at the pace of `planned` in `elapsed_s`.
double projected_planning_seconds(double elapsed_s, int planned, int total);

}  // namespace iostune
