// Whether two schedules' outputs of one graph, run in one precision on the same engine, agree:
// a schedule may change the result only by the precision's rounding (schedule_tolerance()),
// scaled to the output's largest magnitude (at least 1). What the tuning job's end-to-end
// contest and `iostune replay --validate` check, output by output.
#pragma once

#include <string>

#include "src/precision.h"
#include "src/tensor.h"

namespace iostune {

struct OutputAgreement {
    double max_abs_diff = 0;  // largest |output - reference|; NaN when either holds a NaN
    double tolerance = 0;     // schedule_tolerance(precision) * max(1, largest |reference|)
    bool agrees() const { return max_abs_diff <= tolerance; }  // false for NaN
};

// Throws iostune::Error when the sequential schedule's own output (`what`, e.g. "output 2
// ('p4')" of model 'm') holds a NaN or an infinity: then no schedule can be checked against it,
// and the cause is the model (in fp16, activations past 65504), not a schedule.
void require_finite_reference(const HostTensor& reference, Precision precision,
                              const std::string& what);

// schedule_tolerance(precision) * max(1, largest |reference|).
double output_tolerance(const HostTensor& reference, Precision precision);
// Throws iostune::Error when the two differ in shape.
OutputAgreement output_agreement(const HostTensor& output, const HostTensor& reference,
                                 Precision precision);

}  // namespace iostune
