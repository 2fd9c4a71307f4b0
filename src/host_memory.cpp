#include "src/host_memory.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "src/error.h"
#include "src/memory_needs.h"

namespace iostune {

namespace {

// A "Key:   123 kB" line of /proc/meminfo, in bytes.
std::optional<int64_t> meminfo_bytes(const std::string& key) {
    std::ifstream file("/proc/meminfo");
    std::string line;
    while (std::getline(file, line)) {
        std::istringstream fields(line);
        std::string name;
        int64_t kib = 0;
        if (fields >> name >> kib && name == key + ":") return kib * 1024;
    }
    return std::nullopt;
}

// A number in a cgroup v2 file ("max" means no limit).
std::optional<int64_t> cgroup_value(const std::string& file_name) {
    std::ifstream file("/sys/fs/cgroup/" + file_name);
    std::string text;
    if (!(file >> text) || text == "max") return std::nullopt;
    try {
        return std::stoll(text);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<int64_t> rlimit_bytes(int resource) {
    rlimit limit{};
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
    return int64_t(limit.rlim_cur);
}

void take_smaller(std::optional<HostMemoryLimit>& limit, std::optional<int64_t> bytes,
                  const char* source) {
    if (bytes && (!limit || *bytes < limit->bytes)) limit = HostMemoryLimit{*bytes, source};
}

}  // namespace

std::optional<HostMemoryLimit> host_memory_limit() {
    std::optional<HostMemoryLimit> limit;
    const auto available = meminfo_bytes("MemAvailable");
    if (available)
        take_smaller(limit, *available + meminfo_bytes("SwapFree").value_or(0),
                     "available (MemAvailable + free swap)");
    const auto cgroup_max = cgroup_value("memory.max");
    if (cgroup_max)
        take_smaller(limit, *cgroup_max - cgroup_value("memory.current").value_or(0),
                     "left under its cgroup's memory.max");
    // The address space also holds the program and its libraries: the limit is an upper bound.
    take_smaller(limit, rlimit_bytes(RLIMIT_AS), "allowed by ulimit -v");
    take_smaller(limit, rlimit_bytes(RLIMIT_DATA), "allowed by ulimit -d");
    return limit;
}

void require_host_memory(int64_t bytes, const std::string& purpose,
                         const std::optional<HostMemoryLimit>& limit) {
    if (!limit || bytes <= limit->bytes) return;
    throw Error(fmt::format("needs {} of host memory for {}; this machine has {} {}",
                            byte_text(bytes), purpose,
                            byte_text(std::max<int64_t>(limit->bytes, 0)),
                            limit->source));
}

}  // namespace iostune
