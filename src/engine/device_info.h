// What a measurement ran on: stamped on every stored result (DESIGN.md "Store", "Measuring").
#pragma once

#include <cstddef>
#include <string>

namespace iostune {

struct DeviceInfo {
    int device = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    size_t total_memory_bytes = 0;
    int l2_cache_bytes = 0;
    int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
    int runtime_version = 0;  // cudaRuntimeGetVersion
    size_t cudnn_version = 0; // cudnnGetVersion, e.g. 91900
    int cublas_version = 0;

    std::string compute_capability() const;  // "9.0"
    std::string driver_string() const;        // "13.0"
    std::string runtime_string() const;
    std::string cudnn_string() const;         // "9.19.0"
    std::string summary() const;              // one line for logs and reports
};

// Throws iostune::Error if the device does not exist or the driver cannot be reached.
DeviceInfo query_device_info(int device = 0);

}  // namespace iostune
