#include "replay/device_match.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace iostune {

namespace {

// Leading number of a dotted version ("9.19.0" -> "9"); the whole text if there is no dot.
std::string major_part(const std::string& version) { return version.substr(0, version.find('.')); }

}  // namespace

db::DeviceRecord to_device_record(const DeviceInfo& info) {
    db::DeviceRecord record;
    record.name = info.name;
    record.cc_major = info.cc_major;
    record.cc_minor = info.cc_minor;
    record.sm_count = info.sm_count;
    record.driver_version = info.driver_string();
    record.cuda_version = info.runtime_string();
    record.cudnn_version = info.cudnn_string();
    return record;
}

db::DeviceRecord sim_device_record(const std::string& profile) {
    db::DeviceRecord record;
    record.name = "sim:" + profile;
    record.driver_version = "none";
    record.cuda_version = "none";
    record.cudnn_version = "none";
    return record;
}

bool is_sim_device(const db::DeviceRecord& device) { return device.name.rfind("sim:", 0) == 0; }

std::string device_mismatch(const db::DeviceRecord& stored, const db::DeviceRecord& here) {
    std::vector<std::string> differences;
    if (stored.name != here.name)
        differences.push_back(fmt::format("GPU '{}' vs '{}'", stored.name, here.name));
    if (stored.cc_major != here.cc_major || stored.cc_minor != here.cc_minor)
        differences.push_back(fmt::format("compute capability {}.{} vs {}.{}", stored.cc_major,
                                          stored.cc_minor, here.cc_major, here.cc_minor));
    if (major_part(stored.cudnn_version) != major_part(here.cudnn_version))
        differences.push_back(
            fmt::format("cuDNN major version {} vs {}", stored.cudnn_version, here.cudnn_version));
    return fmt::format("{}", fmt::join(differences, ", "));
}

std::string describe_device(const db::DeviceRecord& device) {
    if (is_sim_device(device)) return fmt::format("{} (simulated device)", device.name);
    return fmt::format("{} (cc {}.{}, cuDNN {}, driver {})", device.name, device.cc_major,
                       device.cc_minor, device.cudnn_version, device.driver_version);
}

}  // namespace iostune
