// How much memory this process may still take on the host, and the check that refuses a run
// needing more. Linux overcommits: an allocation beyond what is there often succeeds and the
// process is killed when it touches the pages, so the check runs before, against what is
// available rather than what malloc would promise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace iostune {

struct HostMemoryLimit {
    int64_t bytes = 0;
    std::string source;  // what limits it, for messages: "available (MemAvailable + free swap)"
};

// The smallest of: the memory the kernel reports available (MemAvailable plus free swap, from
// /proc/meminfo), the cgroup's memory.max less its usage, and the address-space and data-segment
// rlimits (ulimit -v, -d). nullopt where none of them can be read.
std::optional<HostMemoryLimit> host_memory_limit();

// Throws iostune::Error when `bytes` exceed `limit`: "needs 63.0 GiB of host memory for
// `purpose`; this machine has 19.6 GiB available (MemAvailable + free swap)". A limit that
// cannot be read lets the run go ahead (an allocation failure then still says what failed).
void require_host_memory(int64_t bytes, const std::string& purpose,
                         const std::optional<HostMemoryLimit>& limit = host_memory_limit());

}  // namespace iostune
