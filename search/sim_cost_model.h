// The simulated cost model: stage latencies from an analytic device profile, no GPU needed.
// Every measurement it returns is an estimate (simulated = true, repeats = 0) and must be shown
// as one. Deterministic: the same stage always gets the same number.
//
// Concurrent stage: each group runs its ops' kernels back to back on its own stream; groups
// overlap, so the stage lasts as long as its longest group unless the groups together need more
// of the machine (its peak FLOP/s or its DRAM bandwidth) than that time offers; each stream past
// the first adds an event fork/join. Merge stage: one convolution with the output channels of all
// merged convs stacked and kernels zero-padded to the largest.
#pragma once

#include <string>

#include "search/cost_model.h"
#include "search/device_profile.h"
#include "search/op_estimate.h"

namespace iostune {

class SimCostModel final : public CostModel {
public:
    explicit SimCostModel(const DeviceProfile& device = device_profile("h100"),
                          Precision precision = Precision::Tf32);

    // Estimated latency; a stage that cannot run (unknown op, illegal merge) comes back with
    // ok = false and the reason, as a failed measurement would.
    StageMeasurement measure(const Graph& graph, const Stage& stage) override;
    std::string name() const override { return "sim:" + device_.name; }
    bool simulated() const override { return true; }

    const DeviceProfile& device() const { return device_; }
    Precision precision() const { return precision_; }

    // Estimated seconds of one op run alone (its kernels back to back, launches included).
    double op_seconds(const Graph& graph, int op_id) const;
    // Estimated seconds of a stage; throws iostune::Error for a stage that cannot run.
    double stage_seconds(const Graph& graph, const Stage& stage) const;

private:
    DeviceProfile device_;
    Precision precision_;
};

}  // namespace iostune
