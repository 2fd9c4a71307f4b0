// Helpers shared by the fleet tests: a scratch folder, files, the built `iostune` run as a child
// process (tuning/child_process.h, the class under test elsewhere), and the processes a parent
// has started (from /proc), to kill one as an operator or the OOM killer would.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tuning/child_process.h"

namespace iostune::testing {

namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "iostune-fleet-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::string file(const std::string& name) const { return (path_ / name).string(); }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

struct Run {
    ExitStatus status;
    std::string out;
    std::string err;
};

// `iostune ARGS...` started in the background, its output in files of `dir`.
class IostuneProcess {
public:
    // `env`: variables set (or replaced) in the child's copy of this environment.
    IostuneProcess(const TempDir& dir, std::vector<std::string> args,
                   const std::string& tag = "run",
                   std::vector<std::pair<std::string, std::string>> env = {})
        : out_(dir.file(tag + ".out")), err_(dir.file(tag + ".err")),
          child_(ChildSpec{with_exe(std::move(args)), std::move(env), out_, err_}) {}

    pid_t pid() const { return child_.pid(); }
    void kill() { child_.kill(); }

    Run wait(double limit_s = 120) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
        std::optional<ExitStatus> status;
        while (!(status = child_.poll())) {
            if (std::chrono::steady_clock::now() > deadline) {
                child_.kill();
                throw std::runtime_error("iostune did not finish in time");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return {*status, read_text(out_), read_text(err_)};
    }

private:
    static std::vector<std::string> with_exe(std::vector<std::string> args) {
        args.insert(args.begin(), IOSTUNE_EXE);
        return args;
    }

    std::string out_, err_;
    ChildProcess child_;
};

inline Run run_iostune(const TempDir& dir, std::vector<std::string> args, double limit_s = 120) {
    return IostuneProcess(dir, std::move(args)).wait(limit_s);
}

// The processes whose parent is `parent`, each with its command line (words joined by spaces).
inline std::vector<std::pair<pid_t, std::string>> children_of(pid_t parent) {
    std::vector<std::pair<pid_t, std::string>> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after ')'.
        const std::string stat = read_text((entry.path() / "stat").string());
        const auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(stat.substr(close + 1));
        std::string state;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid != parent || state == "Z") continue;
        std::string cmdline = read_text((entry.path() / "cmdline").string());
        for (char& c : cmdline)
            if (c == '\0') c = ' ';
        found.emplace_back(static_cast<pid_t>(std::stol(name)), cmdline);
    }
    return found;
}

// Waits until `parent` runs a child whose command line holds `text`; 0 if none within the limit.
inline pid_t wait_for_child(pid_t parent, const std::string& text, double limit_s = 60) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
    while (std::chrono::steady_clock::now() < deadline) {
        for (const auto& [pid, cmdline] : children_of(parent))
            if (cmdline.find(text) != std::string::npos) return pid;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
}

inline bool process_gone(pid_t pid, double limit_s = 10) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
    while (std::chrono::steady_clock::now() < deadline) {
        const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
        const auto close = stat.rfind(')');
        if (stat.empty() || (close != std::string::npos && stat.compare(close + 2, 1, "Z") == 0))
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

}  // namespace iostune::testing
