// Measurements shared by every engine of the process: cuDNN's algorithm ranking and the engine's
// timed choices (a convolution's kernel, a separable convolution's form), per device and
// signature. The same shape on the same device costs the same, so one timing serves all.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/conv_choices.h"

namespace iostune {

template <class Value>
class ProcessCache {
public:
    static ProcessCache& instance() {
        static ProcessCache cache;
        return cache;
    }
    std::optional<Value> find(const std::string& key) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = entries_.find(key);
        if (it == entries_.end()) return std::nullopt;
        return it->second;
    }
    void store(const std::string& key, Value value) {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[key] = std::move(value);
    }

private:
    std::mutex mutex_;
    std::map<std::string, Value> entries_;
};

// A timed choice and its runners-up, so that an engine finding the choice here can still offer
// the search's kernel moves the same alternatives.
struct TimedChoice {
    ConvChoice choice;
    std::vector<ConvChoice> runners_up;
};
using ChoiceCache = ProcessCache<TimedChoice>;

}  // namespace iostune
