#include "src/output_agreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "src/error.h"

namespace iostune {

void require_finite_reference(const HostTensor& reference, Precision precision,
                              const std::string& what) {
    const auto bad = std::find_if(reference.data.begin(), reference.data.end(),
                                  [](float v) { return !std::isfinite(v); });
    if (bad == reference.data.end()) return;
    throw Error(fmt::format(
        "the sequential schedule's {} holds {} ({} of {} values are not finite) in {}, so no "
        "schedule can be checked against it; nothing was stored. {}",
        what, std::isnan(*bad) ? "NaN" : "an infinity",
        std::count_if(reference.data.begin(), reference.data.end(),
                      [](float v) { return !std::isfinite(v); }),
        reference.data.size(), to_string(precision),
        precision == Precision::Fp16
            ? "The model's activations overflow fp16 (its largest value is 65504) or its weights "
              "or input are not finite: try --precision bf16 or tf32"
            : "fp32, tf32 and bf16 share fp32's range, so the model's weights or input are not "
              "finite or its activations overflow even fp32: check the model"));
}

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
