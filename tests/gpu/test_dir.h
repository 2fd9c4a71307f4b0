// A scratch folder for a [gpu] test's files (schedule DBs, model files), one per process: two
// test processes at once (shards on several GPUs of one host, call125) must not share a DB,
// or one replays the schedule the other stored.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace iostune::test {

inline std::filesystem::path process_temp_dir(const std::string& name) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      (name + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace iostune::test
