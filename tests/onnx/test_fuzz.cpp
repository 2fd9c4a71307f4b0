// ONNX files from strangers: small models mutated in seeded ways (bytes flipped, the file cut
// short, wrong or huge dimensions, negative pads, zero strides, initializers missing or moved to
// external files outside the model's folder, dangling inputs, odd opsets) must each give a Graph
// or one iostune::Error: never a crash, a hang or another exception (an "internal error"). Every
// mutation is imported in this process (a watchdog fails a hang); a sample also goes through
// `iostune show` and `iostune import` under a time limit, which must exit 0 or 1.
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "src/error.h"
#include "src/onnx/onnx_import.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;
namespace fs = std::filesystem;

// Every op the importer knows, small: Conv (padded, with bias), BatchNormalization, Relu,
// MaxPool, Pad + AveragePool, a bias-free 1x1 Conv, Add, Concat, Flatten, Gemm, Dropout, Softmax.
std::string builder_model() {
    ModelBuilder m(0, 3, 8, 8, 13);
    m.initializer("w1", {4, 3, 3, 3}, ramp(108, 0.01f, -0.5f));
    m.initializer("b1", {4}, ramp(4));
    auto& c1 = m.node("Conv", {"x", "w1", "b1"}, "c1");
    ModelBuilder::ints(c1, "pads", {1, 1, 1, 1});
    ModelBuilder::ints(c1, "strides", {1, 1});
    ModelBuilder::ints(c1, "kernel_shape", {3, 3});
    for (const char* name : {"scale", "shift", "mean"}) m.initializer(name, {4}, ramp(4));
    m.initializer("var", {4}, ramp(4, 0.1f, 1.0f));
    m.node("BatchNormalization", {"c1", "scale", "shift", "mean", "var"}, "bn");
    m.node("Relu", {"bn"}, "r1");
    auto& mp = m.node("MaxPool", {"r1"}, "mp");
    ModelBuilder::ints(mp, "kernel_shape", {2, 2});
    ModelBuilder::ints(mp, "strides", {2, 2});
    m.int_initializer("pads", {0, 0, 1, 1, 0, 0, 1, 1});
    m.node("Pad", {"mp", "pads"}, "padded");
    auto& ap = m.node("AveragePool", {"padded"}, "ap");
    ModelBuilder::ints(ap, "kernel_shape", {3, 3});
    m.initializer("w2", {4, 4, 1, 1}, ramp(16));
    m.node("Conv", {"mp", "w2"}, "c2");
    m.node("Add", {"ap", "c2"}, "add");
    auto& cat = m.node("Concat", {"add", "mp"}, "cat");
    ModelBuilder::integer(cat, "axis", 1);
    m.node("Flatten", {"cat"}, "flat");
    m.initializer("wf", {5, 128}, ramp(640, 0.001f));
    m.initializer("bf", {5}, ramp(5));
    auto& fc = m.node("Gemm", {"flat", "wf", "bf"}, "fc");
    ModelBuilder::integer(fc, "transB", 1);
    m.node("Dropout", {"fc"}, "drop");
    auto& sm = m.node("Softmax", {"drop"}, "out");
    ModelBuilder::integer(sm, "axis", 1);
    return m.bytes();
}

std::string read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
}

fs::path fuzz_dir() {
    const fs::path dir = fs::path(IOSTUNE_BINARY_DIR) / "tests" / "onnx_fuzz";
    fs::create_directories(dir);
    return dir;
}

template <class T>
T pick(std::mt19937& rng, const std::vector<T>& values) {
    return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

size_t index_below(std::mt19937& rng, size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

const std::vector<int64_t> kOddInts = {0, -1, -7, 1, 3, 1LL << 31, 1LL << 32, (1LL << 40) + 1,
                                       INT64_MAX, INT64_MIN, 1000000};

// One seeded mutation of `model` (kind picks what), as the bytes of an .onnx file; `what` says
// what was done, for the failure message.
std::string mutate(const onnx::ModelProto& original, const std::string& bytes, int kind,
                   std::mt19937& rng, std::string& what) {
    onnx::ModelProto model = original;
    onnx::GraphProto& graph = *model.mutable_graph();
    auto any_initializer = [&]() -> onnx::TensorProto& {
        return *graph.mutable_initializer(int(index_below(rng, size_t(graph.initializer_size()))));
    };
    auto any_node = [&]() -> onnx::NodeProto& {
        return *graph.mutable_node(int(index_below(rng, size_t(graph.node_size()))));
    };
    switch (kind) {
        case 0: {  // bytes flipped
            std::string flipped = bytes;
            const int flips = 1 + int(index_below(rng, 8));
            for (int i = 0; i < flips; ++i)
                flipped[index_below(rng, flipped.size())] ^= char(1 + index_below(rng, 255));
            what = fmt::format("{} bytes flipped", flips);
            return flipped;
        }
        case 1: {  // cut short
            const size_t length = index_below(rng, bytes.size());
            what = fmt::format("truncated to {} of {} bytes", length, bytes.size());
            return bytes.substr(0, length);
        }
        case 2: {  // a weight's dimension changed
            onnx::TensorProto& t = any_initializer();
            if (t.dims_size() == 0) t.add_dims(1);
            const int d = int(index_below(rng, size_t(t.dims_size())));
            const int64_t value = pick(rng, kOddInts);
            t.set_dims(d, value);
            what = fmt::format("initializer '{}' dim {} = {}", t.name(), d, value);
            break;
        }
        case 3: {  // an attribute's values made odd: negative pads, zero strides, huge kernels
            onnx::NodeProto& node = any_node();
            if (node.attribute_size() == 0) {
                ModelBuilder::ints(node, pick<std::string>(rng, {"pads", "strides", "kernel_shape",
                                                                "dilations"}),
                                   {pick(rng, kOddInts), 1, 1, 1});
            } else {
                onnx::AttributeProto& a =
                    *node.mutable_attribute(int(index_below(rng, size_t(node.attribute_size()))));
                const int64_t value = pick(rng, kOddInts);
                if (a.ints_size() > 0)
                    a.set_ints(int(index_below(rng, size_t(a.ints_size()))), value);
                else
                    a.set_i(value);
                if (index_below(rng, 4) == 0) a.set_type(onnx::AttributeProto::FLOATS);
            }
            what = fmt::format("node '{}': an attribute changed", node.name());
            break;
        }
        case 4: {  // an initializer missing
            const int i = int(index_below(rng, size_t(graph.initializer_size())));
            what = fmt::format("initializer '{}' removed", graph.initializer(i).name());
            graph.mutable_initializer()->DeleteSubrange(i, 1);
            break;
        }
        case 5: {  // a dangling input, or an input dropped
            onnx::NodeProto& node = any_node();
            if (node.input_size() > 0 && index_below(rng, 3) != 0) {
                node.set_input(int(index_below(rng, size_t(node.input_size()))),
                               pick<std::string>(rng, {"nowhere", "", "out", "x"}));
            } else {
                node.clear_input();
            }
            what = fmt::format("node '{}': inputs changed", node.name());
            break;
        }
        case 6: {  // external data: absolute, climbing out, a directory, a device, missing
            onnx::TensorProto& t = any_initializer();
            t.clear_raw_data();
            t.clear_float_data();
            t.clear_int64_data();
            t.set_data_location(onnx::TensorProto::EXTERNAL);
            const std::string location = pick<std::string>(
                rng, {"/etc/passwd", "../../../etc/passwd", ".", "sub", "/dev/zero",
                      "missing.bin", "w.bin"});
            auto* entry = t.add_external_data();
            entry->set_key("location");
            entry->set_value(location);
            if (index_below(rng, 2) == 0) {
                auto* length = t.add_external_data();
                length->set_key("length");
                length->set_value(std::to_string(pick(rng, kOddInts)));
            }
            what = fmt::format("initializer '{}' external at '{}'", t.name(), location);
            break;
        }
        case 7: {  // the input's shape: zero, negative, huge, symbolic
            auto* dims = graph.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
            const int d = int(index_below(rng, size_t(dims->dim_size())));
            const int64_t value = pick(rng, kOddInts);
            if (index_below(rng, 5) == 0)
                dims->mutable_dim(d)->set_dim_param("dynamic");
            else
                dims->mutable_dim(d)->set_dim_value(value);
            what = fmt::format("input dim {} = {}", d, value);
            break;
        }
        case 8: {  // an initializer's element type or data size wrong
            onnx::TensorProto& t = any_initializer();
            if (index_below(rng, 2) == 0) {
                const int type = int(pick<int64_t>(rng, {0, 2, 7, 8, 10, 11, 16, 99}));
                t.set_data_type(type);
                what = fmt::format("initializer '{}' element type {}", t.name(), type);
            } else {
                t.clear_float_data();
                t.clear_int64_data();
                t.set_raw_data(std::string(index_below(rng, 64), '\x7f'));
                what = fmt::format("initializer '{}' raw data of {} bytes", t.name(),
                                   t.raw_data().size());
            }
            break;
        }
        case 9: {  // nodes out of order, duplicated, renamed to another op
            const int i = int(index_below(rng, size_t(graph.node_size())));
            const int j = int(index_below(rng, size_t(graph.node_size())));
            switch (index_below(rng, 3)) {
                case 0: graph.mutable_node()->SwapElements(i, j); break;
                case 1: *graph.add_node() = graph.node(i); break;
                default:
                    graph.mutable_node(i)->set_op_type(graph.node(j).op_type());
                    break;
            }
            what = fmt::format("nodes {} and {} reordered, copied or retyped", i, j);
            break;
        }
        case 10: {  // outputs: none, two, renamed
            switch (index_below(rng, 3)) {
                case 0: graph.clear_output(); break;
                case 1: *graph.add_output() = graph.output(0); break;
                default: graph.mutable_output(0)->set_name("w1"); break;
            }
            what = "graph outputs changed";
            break;
        }
        default: {  // the opset, the IR version
            model.mutable_opset_import(0)->set_version(pick(rng, kOddInts));
            if (index_below(rng, 2) == 0) model.set_ir_version(pick(rng, kOddInts));
            what = "opset or IR version changed";
            break;
        }
    }
    return model.SerializeAsString();
}

// Ends the process with a message when an in-process import outlasts its time limit: a hang
// fails the test at once instead of stalling CI (the import itself cannot be interrupted).
class Watchdog {
public:
    explicit Watchdog(std::string what) : thread_([this, what = std::move(what)] {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!done_cv_.wait_for(lock, std::chrono::seconds(20), [this] { return done_; })) {
            std::fprintf(stderr, "FAILED: %s: the import hangs (over 20 s)\n", what.c_str());
            std::_Exit(1);
        }
    }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        done_cv_.notify_one();
        thread_.join();
    }

private:
    std::mutex mutex_;
    std::condition_variable done_cv_;
    bool done_ = false;
    std::thread thread_;
};

struct Exit {
    int code = -1;  // -1: killed (a signal, or the time limit)
    std::string output;
};

#ifdef IOSTUNE_EXE
Exit iostune_cli(const std::string& args) {
    Exit r;
    FILE* pipe =
        popen(fmt::format("timeout -s KILL 20 '{}' {} 2>&1", IOSTUNE_EXE, args).c_str(), "r");
    REQUIRE(pipe);
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) r.output.append(buffer, n);
    const int status = pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// `iostune show` then `iostune import` on `path`: exit 0 or 1, no internal error, within 20 s.
void check_cli(const fs::path& path, const std::string& what) {
    for (const std::string& command :
         {fmt::format("show '{}'", path.string()),
          fmt::format("import '{}' -o '{}'", path.string(),
                      (path.parent_path() / "imported.json").string())}) {
        const Exit r = iostune_cli(command);
        INFO(what << ": iostune " << command << " exited " << r.code << ":\n" << r.output);
        CHECK((r.code == 0 || r.code == 1));
        CHECK_THAT(r.output, !Catch::Contains("internal error"));
        if (r.code != 0) break;  // import fails the same way
    }
}
#endif

}  // namespace

TEST_CASE("mutated ONNX files: a model or one clear error, never a crash, hang or internal error",
          "[onnx][cli][fuzz]") {
    const fs::path dir = fuzz_dir();
    // The C++-built model always; PyTorch's exports (raw_data initializers, Constant nodes, its
    // own node names) when the fixtures exist.
    std::vector<std::pair<std::string, std::string>> bases = {{"builder", builder_model()}};
    for (const char* name : {"branchy_opset17.onnx", "conv_bn.onnx"})
        if (fs::exists(fixture_path(name))) bases.emplace_back(name, read_bytes(fixture_path(name)));
    // Files the external-data mutations may name, inside and below the model's folder.
    fs::create_directories(dir / "sub");
    write_bytes(dir / "w.bin", std::string(64, '\0'));

    std::mt19937 rng(20261124);
    constexpr int kKinds = 12, kPerBase = 120;
    int imported = 0, refused = 0;
    for (const auto& [base_name, bytes] : bases) {
        onnx::ModelProto original;
        REQUIRE(original.ParseFromString(bytes));
        REQUIRE(original.graph().initializer_size() > 0);  // the mutations pick among them
        REQUIRE(original.graph().node_size() > 0);
        REQUIRE_NOTHROW(import_onnx_bytes(bytes, base_name));
        for (int i = 0; i < kPerBase; ++i) {
            const int kind = i % kKinds;
            std::string what;
            const std::string mutated = mutate(original, bytes, kind, rng, what);
            what = fmt::format("{} mutation {} (kind {}): {}", base_name, i, kind, what);
            const fs::path path = dir / fmt::format("m{}.onnx", i);
            write_bytes(path, mutated);
            const Watchdog watchdog(what);
            try {
                import_onnx_file(path.string());
                ++imported;
            } catch (const Error&) {
                ++refused;
            } catch (const std::exception& e) {
                FAIL(what << ": not an iostune::Error (an internal error): " << e.what());
            }
#ifdef IOSTUNE_EXE
            if (i % 8 == 0) check_cli(path, what);
#endif
        }
    }
    INFO(imported << " mutations imported, " << refused << " refused");
    CHECK(refused > imported);  // most mutations break the model, and are caught
}

TEST_CASE("an .onnx path that is no regular file is refused, not read", "[onnx][fuzz]") {
    const fs::path dir = fuzz_dir() / "odd_files";
    fs::create_directories(dir / "folder.onnx");
    fs::remove(dir / "zero.onnx");
    fs::create_symlink("/dev/zero", dir / "zero.onnx");
    fs::remove(dir / "pipe.onnx");
    REQUIRE(mkfifo((dir / "pipe.onnx").c_str(), 0600) == 0);
    write_bytes(dir / "empty.onnx", "");
    for (const char* name : {"folder.onnx", "zero.onnx", "pipe.onnx"}) {
        INFO(name);
        REQUIRE_THROWS_WITH(import_onnx_file((dir / name).string()),
                            Catch::Contains("not a regular file"));
#ifdef IOSTUNE_EXE
        // Before the check, `show` read /dev/zero and the pipe forever.
        const Exit r = iostune_cli(fmt::format("show '{}'", (dir / name).string()));
        INFO(r.output);
        CHECK(r.code == 1);
        CHECK_THAT(r.output, Catch::Contains("not a regular file"));
#endif
    }
    REQUIRE_THROWS_WITH(import_onnx_file((dir / "empty.onnx").string()),
                        Catch::Contains("is empty"));
    REQUIRE_THROWS_WITH(import_onnx_file((dir / "missing.onnx").string()),
                        Catch::Contains("cannot open"));
}
