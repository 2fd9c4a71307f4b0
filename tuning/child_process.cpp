#include "tuning/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "src/error.h"

extern char** environ;

namespace iostune {

namespace {

// A file descriptor closed on scope exit.
class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) close(fd_);
    }
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    Fd& operator=(Fd&&) = delete;
    int get() const { return fd_; }
    void reset() {
        if (fd_ >= 0) close(fd_);
        fd_ = -1;
    }

private:
    int fd_;
};

Fd open_output(const std::string& path) {
    Fd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0)
        throw Error(fmt::format("cannot create '{}' for a child process's output: {}; check the "
                                "folder exists and is writable",
                                path, std::strerror(errno)));
    return fd;
}

// "NAME=value" strings: this process's environment with `overrides` set.
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
    std::map<std::string, std::string> values;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string text(*entry);
        const auto eq = text.find('=');
        if (eq != std::string::npos) values[text.substr(0, eq)] = text.substr(eq + 1);
    }
    for (const auto& [name, value] : overrides) values[name] = value;
    std::vector<std::string> out;
    for (const auto& [name, value] : values) out.push_back(name + "=" + value);
    return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// In the child, between fork and exec: only async-signal-safe calls. An errno written to
// `report` tells the parent that exec failed.
[[noreturn]] void exec_child(pid_t parent, int out, int err, int report, char* const* argv,
                             char* const* envp) {
    // Dies with the parent: a SIGKILLed tune must not leave searches behind.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    const int null_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_in < 0 || dup2(null_in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
        dup2(err, STDERR_FILENO) < 0) {
        const int e = errno;
        (void)!write(report, &e, sizeof e);
        _exit(127);
    }
    execve(argv[0], argv, envp);
    const int e = errno;
    (void)!write(report, &e, sizeof e);
    _exit(127);
}

}  // namespace

std::string ExitStatus::describe() const {
    if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
    return fmt::format("exit code {}", code);
}

ChildProcess::ChildProcess(const ChildSpec& spec) {
    if (spec.argv.empty()) throw Error("a child process needs a program to run");
    // Everything the child needs is built before fork: it may only make async-signal-safe calls.
    const Fd out = open_output(spec.stdout_path);
    const Fd err = open_output(spec.stderr_path);
    std::vector<std::string> args = spec.argv;
    std::vector<std::string> env = child_environment(spec.env);
    std::vector<char*> argv = pointers(args);
    std::vector<char*> envp = pointers(env);
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0)
        throw Error(fmt::format("cannot start '{}': pipe failed: {}", spec.argv[0],
                                std::strerror(errno)));
    Fd report_read(report[0]);
    Fd report_write(report[1]);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0)
        throw Error(fmt::format("cannot start '{}': fork failed: {}", spec.argv[0],
                                std::strerror(errno)));
    if (pid_ == 0)
        exec_child(parent, out.get(), err.get(), report_write.get(), argv.data(), envp.data());
    report_write.reset();  // the read below ends when the child's copy closes at exec
    int child_errno = 0;
    ssize_t n;
    do {
        n = read(report_read.get(), &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    if (n == sizeof child_errno) {
        reap_now();
        throw Error(fmt::format("cannot run '{}': {}", spec.argv[0], std::strerror(child_errno)));
    }
}

ChildProcess::~ChildProcess() {
    if (pid_ > 0 && !status_) {
        ::kill(pid_, SIGKILL);
        reap_now();
    }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(std::move(other.status_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        if (pid_ > 0 && !status_) {
            ::kill(pid_, SIGKILL);
            reap_now();
        }
        pid_ = std::exchange(other.pid_, -1);
        status_ = std::move(other.status_);
    }
    return *this;
}

std::optional<ExitStatus> ChildProcess::poll() {
    if (status_ || pid_ <= 0) return status_;
    int raw = 0;
    pid_t done;
    do {
        done = waitpid(pid_, &raw, WNOHANG);
    } while (done < 0 && errno == EINTR);
    if (done == 0) return std::nullopt;
    ExitStatus status;
    if (done < 0) {
        status.code = 127;  // reaped elsewhere (not by this owner): its status is lost
    } else if (WIFSIGNALED(raw)) {
        status.signal = WTERMSIG(raw);
    } else {
        status.code = WEXITSTATUS(raw);
    }
    status_ = status;
    return status_;
}

void ChildProcess::kill() {
    if (pid_ > 0 && !status_) ::kill(pid_, SIGKILL);
}

void ChildProcess::reap_now() {
    int raw = 0;
    while (waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
    }
    ExitStatus status;
    if (WIFSIGNALED(raw))
        status.signal = WTERMSIG(raw);
    else
        status.code = WEXITSTATUS(raw);
    status_ = status;
}

}  // namespace iostune
