// A one-line progress bar with ETA on stderr, for searches long enough to wonder about. It
// draws only when stderr is a terminal (never into logs or pipes), and only after the work has
// run for a moment, so quick searches print nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace iostune {

class ProgressBar {
public:
    // `enabled` = false makes every call a no-op; true still requires stderr to be a terminal.
    ProgressBar(std::string label, int64_t total, bool enabled = true);
    ~ProgressBar();
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    void advance(int64_t steps = 1);
    // Clears the line (if one was drawn).
    void finish();

private:
    void draw(double elapsed_s);

    std::string label_;
    int64_t total_;
    int64_t done_ = 0;
    bool active_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

// "1:02:03" / "02:03": a duration for humans.
std::string format_duration(double seconds);

}  // namespace iostune
