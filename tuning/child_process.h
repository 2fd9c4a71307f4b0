// One child process (fork + execve) whose standard output and error go to files, owned like
// any other handle: the destructor kills (SIGKILL) and reaps a child still running, and the
// child is killed as well if its parent dies (PR_SET_PDEATHSIG), so neither an exception nor a
// killed `iostune tune` leaves a search running on its own.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace iostune {

// How a child ended.
struct ExitStatus {
    int code = -1;   // the exit code, when it exited
    int signal = 0;  // the signal that ended it, when it was killed

    bool success() const { return signal == 0 && code == 0; }
    std::string describe() const;  // "exit code 1", "killed by signal 9 (Killed)"
};

struct ChildSpec {
    std::vector<std::string> argv;  // argv[0] is the program's path (no PATH search)
    // Set (or replaced) in a copy of this process's environment.
    std::vector<std::pair<std::string, std::string>> env;
    std::string stdout_path;  // truncated and written
    std::string stderr_path;
};

class ChildProcess {
public:
    // Throws iostune::Error when the child cannot be started: an output file that cannot be
    // created, fork failing, or the program not executable (reported by the child before exec).
    explicit ChildProcess(const ChildSpec& spec);
    ~ChildProcess();
    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    // The exit status once the child has ended, without waiting; empty while it runs.
    std::optional<ExitStatus> poll();
    void kill();  // SIGKILL; poll() then reports it

private:
    void reap_now();

    pid_t pid_ = -1;
    std::optional<ExitStatus> status_;
};

}  // namespace iostune
