#include "search/progress_bar.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace iostune {

namespace {

constexpr double kQuietSeconds = 0.5;    // searches shorter than this show nothing
constexpr double kRedrawSeconds = 0.1;   // redraw at most ten times a second
constexpr int kBarCells = 30;

double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

}  // namespace

std::string format_duration(double seconds) {
    const auto total = int64_t(std::max(0.0, seconds) + 0.5);
    const int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
    return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{:02}:{:02}", m, s);
}

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 1)),
      active_(enabled && isatty(fileno(stderr))),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::advance(int64_t steps) {
    done_ = std::min(total_, done_ + steps);
    if (!active_) return;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = seconds_between(start_, now);
    if (elapsed < kQuietSeconds || seconds_between(last_draw_, now) < kRedrawSeconds) return;
    last_draw_ = now;
    draw(elapsed);
}

void ProgressBar::draw(double elapsed_s) {
    const double fraction = double(done_) / double(total_);
    const int filled = int(fraction * kBarCells);
    const std::string eta =
        done_ > 0 ? format_duration(elapsed_s * (1 - fraction) / fraction) : std::string("--:--");
    fmt::print(stderr, "\r{} [{}{}] {:3.0f}% {}/{} elapsed {} ETA {}\033[K", label_,
               std::string(size_t(filled), '#'), std::string(size_t(kBarCells - filled), ' '),
               fraction * 100, done_, total_, format_duration(elapsed_s), eta);
    std::fflush(stderr);
    drawn_ = true;
}

void ProgressBar::finish() {
    if (drawn_) {
        fmt::print(stderr, "\r\033[K");
        std::fflush(stderr);
    }
    drawn_ = false;
    active_ = false;
}

}  // namespace iostune
