// The child process owner (tuning/child_process.h) that runs each key's search: exit codes and
// signals reported, output in files, the environment override that pins a worker's GPU, a
// program that cannot run refused at once, and no child outliving its owner.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "src/error.h"
#include "tests/fleet/fleet_test_support.h"
#include "tuning/child_process.h"

using iostune::ChildProcess;
using iostune::ChildSpec;
using iostune::ExitStatus;
using iostune::testing::process_gone;
using iostune::testing::read_text;
using iostune::testing::TempDir;
using Catch::Matchers::Contains;

namespace {

ExitStatus wait(ChildProcess& child) {
    std::optional<ExitStatus> status;
    for (int i = 0; i < 1000 && !(status = child.poll()); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(status);
    return *status;
}

ChildSpec shell(const TempDir& dir, const std::string& script) {
    return {{"/bin/sh", "-c", script}, {}, dir.file("out.txt"), dir.file("err.txt")};
}

}  // namespace

TEST_CASE("a child's exit code, output and error go where they are asked", "[fleet][child]") {
    TempDir dir;
    ChildProcess child(shell(dir, "echo to-out; echo to-err >&2; exit 3"));
    const ExitStatus status = wait(child);
    CHECK(status.code == 3);
    CHECK(status.signal == 0);
    CHECK_FALSE(status.success());
    CHECK(status.describe() == "exit code 3");
    CHECK(read_text(dir.file("out.txt")) == "to-out\n");
    CHECK(read_text(dir.file("err.txt")) == "to-err\n");
    CHECK(child.poll()->code == 3);  // asked again: the same answer
}

TEST_CASE("a worker's CUDA_VISIBLE_DEVICES reaches its child, the rest of the environment too",
          "[fleet][child]") {
    TempDir dir;
    setenv("IOSTUNE_TEST_INHERITED", "kept", 1);
    setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3", 1);
    ChildSpec spec = shell(dir, "echo \"$CUDA_VISIBLE_DEVICES $IOSTUNE_TEST_INHERITED\"");
    spec.env = {{"CUDA_VISIBLE_DEVICES", "2"}};
    ChildProcess child(spec);
    CHECK(wait(child).success());
    CHECK(read_text(dir.file("out.txt")) == "2 kept\n");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("IOSTUNE_TEST_INHERITED");
}

TEST_CASE("a killed child reports its signal", "[fleet][child]") {
    TempDir dir;
    ChildProcess child(shell(dir, "exec sleep 30"));
    CHECK_FALSE(child.poll());
    child.kill();
    const ExitStatus status = wait(child);
    CHECK(status.signal == SIGKILL);
    CHECK_THAT(status.describe(), Contains("killed by signal 9"));
}

TEST_CASE("a program that cannot run is refused when started", "[fleet][child]") {
    TempDir dir;
    CHECK_THROWS_WITH(ChildProcess(ChildSpec{{dir.file("no-such-iostune")}, {}, dir.file("o"),
                                             dir.file("e")}),
                      Contains("cannot run") && Contains("no-such-iostune") &&
                          Contains("No such file"));
    CHECK_THROWS_WITH(ChildProcess(ChildSpec{{"/bin/true"}, {}, dir.file("no/such/dir/o"),
                                             dir.file("e")}),
                      Contains("cannot create") && Contains("no/such/dir/o"));
}

TEST_CASE("a child still running when its owner goes is killed and reaped", "[fleet][child]") {
    TempDir dir;
    pid_t pid = 0;
    {
        ChildProcess child(shell(dir, "exec sleep 30"));
        pid = child.pid();
        REQUIRE(pid > 0);
    }
    CHECK(process_gone(pid, 5));
}
