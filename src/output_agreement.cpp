#include "src/output_agreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "src/error.h"

namespace iostune {

double output_tolerance(const HostTensor& reference, Precision precision) {
    double magnitude = 0;
    for (float v : reference.data) magnitude = std::max(magnitude, double(std::fabs(v)));
    return schedule_tolerance(precision) * std::max(1.0, magnitude);
}

OutputAgreement output_agreement(const HostTensor& output, const HostTensor& reference,
                                 Precision precision) {
    if (!(output.shape == reference.shape) || output.data.size() != reference.data.size())
        throw Error(fmt::format("an output of shape {}x{}x{}x{} ({} values) is compared with a "
                                "reference of shape {}x{}x{}x{} ({} values); the engine is "
                                "inconsistent",
                                output.shape.n, output.shape.c, output.shape.h, output.shape.w,
                                output.data.size(), reference.shape.n, reference.shape.c,
                                reference.shape.h, reference.shape.w, reference.data.size()));
    double diff = 0;
    for (size_t i = 0; i < output.data.size(); ++i) {
        const double d = std::fabs(double(output.data[i]) - double(reference.data[i]));
        diff = std::isnan(d) ? d : std::max(diff, d);  // a NaN, once seen, stays (and fails)
    }
    return {diff, output_tolerance(reference, precision)};
}

}  // namespace iostune
