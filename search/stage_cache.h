// Where stage measurements are remembered between (and during) searches. Implementations: an
// in-memory map (in_memory_stage_cache.h) and the SQLite store (db/), which keeps them for good.
#pragma once

#include <compare>
#include <optional>
#include <string>

#include "search/cost_model.h"

namespace iostune {

// A measurement is only reusable on the same device, batch size, precision and layout, for the
// same stage of the same graph structure.
struct StageCacheKey {
    std::string device;     // GPU name, or "sim:<profile>" for estimates
    int batch = 0;
    std::string precision;  // e.g. "tf32", "fp16"
    std::string layout;     // the engine's activation layout, "nchw" or "nhwc"
    std::string stage;      // graph fingerprint + "|" + stage_signature()
    auto operator<=>(const StageCacheKey&) const = default;
};

class StageCache {
public:
    virtual ~StageCache() = default;
    virtual std::optional<StageMeasurement> get(const StageCacheKey& key) = 0;
    // Stores (or replaces) the measurement of `key`.
    virtual void put(const StageCacheKey& key, const StageMeasurement& measurement) = 0;
};

}  // namespace iostune
