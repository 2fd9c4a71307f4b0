// Issue 33's hostile model files, one test per example: sizes past 32 bits are refused with the
// value as written (never cut), a node's arity, attributes and flags follow its ONNX schema,
// declared output types are checked, a model too large for the machine is refused before it is
// allocated, and names from the file are quoted escaped and cut to one readable line.
#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "src/error.h"
#include "src/host_memory.h"
#include "src/memory_needs.h"
#include "src/onnx/onnx_import.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;
using Catch::Matchers::Contains;

constexpr int64_t k2to31 = int64_t(1) << 31;
constexpr int64_t k2to32 = int64_t(1) << 32;
constexpr int64_t k2to61 = int64_t(1) << 61;
constexpr int64_t k2to62 = int64_t(1) << 62;

// x [n, c, h, w] -> Conv 3x3 (pads `pads`) -> Relu.
ModelBuilder conv_model(int64_t n, int64_t c, int64_t h, int64_t w,
                        std::vector<int64_t> pads = {1, 1, 1, 1}) {
    ModelBuilder b(n, c, h, w);
    const int64_t in_c = c > 0 && c <= 8 ? c : 2;
    b.initializer("w", {2, in_c, 3, 3}, ramp(size_t(18 * in_c), 0.01f));
    auto& conv = b.node("Conv", {"x", "w"}, "c", "conv1");
    ModelBuilder::ints(conv, "pads", pads);
    b.node("Relu", {"c"}, "y", "relu1");
    return b;
}

// The message import_onnx_bytes throws for `bytes` (fails the test if it imports).
std::string import_error(const std::string& bytes) {
    try {
        import_onnx_bytes(bytes, "m.onnx");
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("the model imported");
    return {};
}

bool one_printable_line(const std::string& message) {
    for (const char c : message)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            return false;
    return true;
}

}  // namespace

TEST_CASE("input dimensions past 32 bits are refused as written, never cut", "[onnx][hostile]") {
    // Was imported and run as 1x3x1x64.
    const std::string tall = import_error(conv_model(1, 3, k2to32 + 1, 64).bytes());
    CHECK_THAT(tall, Contains("'x'") && Contains("4294967297") && Contains("1x3x4294967297x64"));
    // A channel count of 4294967299 became 3.
    CHECK_THAT(import_error(conv_model(1, k2to32 + 3, 8, 8).bytes()), Contains("4294967299"));
    // 2^31 channels were "-2147483648".
    const std::string wide = import_error(conv_model(1, k2to31, 8, 8).bytes());
    CHECK_THAT(wide, Contains("2147483648") && !Contains("-2147483648"));
    // A batch of 2^62 was "output would be 0x64x32x32".
    const std::string batch = import_error(conv_model(k2to62, 3, 32, 32).bytes());
    CHECK_THAT(batch, Contains("4611686018427387904") && !Contains("0x"));
    // Sizes near 2^31 x 2^31 were "cannot create std::vector larger than max_size()".
    CHECK_THAT(import_error(conv_model(1, 1, k2to31 - 1, k2to31 - 1).bytes()),
               Contains("elements") && Contains("2147483647"));
}

TEST_CASE("convolution pads past 32 bits are refused by the node holding them", "[onnx][hostile]") {
    // 2^62, 2^61 and 2^32 were accepted and ignored; 2^31 was refused as if negative.
    for (const int64_t pad : {k2to62, k2to61, k2to32, k2to31}) {
        INFO("pad " << pad);
        const std::string message =
            import_error(conv_model(1, 2, 8, 8, {pad, pad, pad, pad}).bytes());
        CHECK_THAT(message, Contains("'conv1'") && Contains("'pads'") &&
                                Contains(fmt::format("{}", pad)) && !Contains("negative") &&
                                !Contains("broadcast"));
    }
    // The largest a graph holds still imports; its output is as large as it says.
    const std::string huge_ok = import_error(conv_model(1, 2, 8, 8, {1, 1, k2to31 - 1, 1}).bytes());
    CHECK_THAT(huge_ok, Contains("'conv1'") && Contains("2147483647"));
}

TEST_CASE("Pad nodes, strides, groups and resize sizes past 32 bits are refused",
          "[onnx][hostile]") {
    {  // a Pad of 2^32 + 1 rows was one row
        ModelBuilder b(1, 1, 4, 4);
        b.int_initializer("pads", {0, 0, k2to32 + 1, 0, 0, 0, 0, 0});
        b.node("Pad", {"x", "pads"}, "y", "pad_rows");
        CHECK_THAT(import_error(b.bytes()), Contains("'pad_rows'") && Contains("4294967297"));
    }
    {  // two Pads whose sum leaves int
        ModelBuilder b(1, 1, 4, 4);
        b.int_initializer("pads", {0, 0, k2to31 - 1, 0, 0, 0, 0, 0});
        b.node("Pad", {"x", "pads"}, "p1", "pad_a");
        b.node("Pad", {"p1", "pads"}, "y", "pad_b");
        CHECK_THAT(import_error(b.bytes()), Contains("'pad_b'") && Contains("4294967294"));
    }
    {
        ModelBuilder b = conv_model(1, 2, 8, 8);
        ModelBuilder::ints(*b.model().mutable_graph()->mutable_node(0), "strides",
                           {k2to32 + 1, 1});
        CHECK_THAT(import_error(b.bytes()), Contains("'conv1'") && Contains("4294967297"));
    }
    {
        ModelBuilder b(1, 2, 4, 4);
        b.int_initializer("sizes", {1, 2, k2to32 + 8, 8});
        auto& resize = b.node("Resize", {"x", "", "", "sizes"}, "y", "grow");
        for (const auto& [name, value] : {std::pair{"coordinate_transformation_mode", "asymmetric"},
                                          std::pair{"nearest_mode", "floor"}}) {
            auto* a = resize.add_attribute();
            a->set_name(name);
            a->set_type(onnx::AttributeProto::STRING);
            a->set_s(value);
        }
        CHECK_THAT(import_error(b.bytes()), Contains("'grow'") && Contains("4294967304"));
    }
}

TEST_CASE("an opset past 32 bits is not read as a supported one", "[onnx][hostile]") {
    ModelBuilder b = conv_model(1, 2, 8, 8);
    b.model().mutable_opset_import(0)->set_version(k2to32 + 13);
    CHECK_THAT(import_error(b.bytes()), Contains("opset 4294967309"));
}

TEST_CASE("a node listing more inputs than its op takes is refused", "[onnx][hostile]") {
    // An Add edited into a LeakyRelu dropped its second input and ran.
    ModelBuilder b(1, 2, 4, 4);
    b.node("Sigmoid", {"x"}, "s", "gate");
    b.node("LeakyRelu", {"x", "s"}, "y", "edited_add");
    const std::string message = import_error(b.bytes());
    CHECK_THAT(message, Contains("'edited_add'") && Contains("LeakyRelu") &&
                            Contains("lists 2 inputs") && Contains("takes 1"));
    // Folded nodes are checked too: a three-input Add of constants was summed.
    ModelBuilder folded = conv_model(1, 2, 4, 4);
    folded.int_initializer("a", {1});
    folded.node("Add", {"a", "a", "a"}, "three", "add3");
    folded.node("Relu", {"y"}, "z", "last");
    CHECK_THAT(import_error(folded.bytes()), Contains("'add3'") && Contains("lists 3 inputs"));
    // A required input given as an empty name, and too many outputs.
    ModelBuilder empty(1, 2, 4, 4);
    empty.node("Conv", {"x", ""}, "y", "no_weight");
    CHECK_THAT(import_error(empty.bytes()),
               Contains("'no_weight'") && Contains("input 1 is required"));
    ModelBuilder outputs(1, 2, 4, 4);
    outputs.node("Relu", {"x"}, "y", "two_outputs").add_output("extra");
    CHECK_THAT(import_error(outputs.bytes()),
               Contains("'two_outputs'") && Contains("lists 2 outputs"));
}

TEST_CASE("unknown attributes, wrong attribute types and flags outside {0, 1} are refused",
          "[onnx][hostile]") {
    {  // a transB on a Conv was ignored
        ModelBuilder b = conv_model(1, 2, 8, 8);
        ModelBuilder::integer(*b.model().mutable_graph()->mutable_node(0), "transB", 1);
        CHECK_THAT(import_error(b.bytes()), Contains("'conv1'") && Contains("'transB'") &&
                                                Contains("not an attribute of Conv") &&
                                                Contains("kernel_shape"));
    }
    {  // a misspelt kernel_shape was ignored
        ModelBuilder b = conv_model(1, 2, 8, 8);
        ModelBuilder::ints(*b.model().mutable_graph()->mutable_node(0), "kernel_shap", {3, 3});
        CHECK_THAT(import_error(b.bytes()), Contains("'kernel_shap'"));
    }
    {  // the same attribute twice
        ModelBuilder b = conv_model(1, 2, 8, 8);
        ModelBuilder::ints(*b.model().mutable_graph()->mutable_node(0), "pads", {0, 0, 0, 0});
        CHECK_THAT(import_error(b.bytes()), Contains("'pads' is given twice"));
    }
    {  // an INT given where ONNX defines INTS
        ModelBuilder b = conv_model(1, 2, 8, 8);
        ModelBuilder::integer(*b.model().mutable_graph()->mutable_node(0), "strides", 1);
        CHECK_THAT(import_error(b.bytes()), Contains("'strides' is INT") && Contains("INTS"));
    }
    // MaxPool ceil_mode 7 or -1 acted as 1.
    for (const int64_t flag : {int64_t(7), int64_t(-1)}) {
        ModelBuilder b(1, 1, 5, 5);
        auto& pool = b.node("MaxPool", {"x"}, "y", "pool");
        ModelBuilder::ints(pool, "kernel_shape", {2, 2});
        ModelBuilder::integer(pool, "ceil_mode", flag);
        CHECK_THAT(import_error(b.bytes()),
                   Contains("'pool'") && Contains(fmt::format("'ceil_mode' is {}", flag)) &&
                       Contains("0 or 1"));
    }
    {  // a required attribute missing
        ModelBuilder b(1, 1, 5, 5);
        b.node("MaxPool", {"x"}, "y", "pool");
        CHECK_THAT(import_error(b.bytes()), Contains("'kernel_shape' is missing"));
    }
}

TEST_CASE("a graph output declared INT64 or STRING is refused", "[onnx][hostile]") {
    for (const int type : {int(onnx::TensorProto::INT64), int(onnx::TensorProto::STRING)}) {
        ModelBuilder b = conv_model(1, 2, 8, 8);
        const std::string bytes = b.bytes();
        onnx::ModelProto model;
        REQUIRE(model.ParseFromString(bytes));
        auto* tensor =
            model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(type);
        CHECK_THAT(import_error(model.SerializeAsString()),
                   Contains("'y'") &&
                       Contains(type == onnx::TensorProto::INT64 ? "INT64" : "STRING") &&
                       Contains("float32"));
        tensor->set_elem_type(onnx::TensorProto::FLOAT);
        CHECK_NOTHROW(import_onnx_bytes(model.SerializeAsString(), "m.onnx"));
    }
}

TEST_CASE("names from the file are escaped and cut in messages", "[onnx][hostile]") {
    {  // an op type of 8,000 characters was echoed whole
        ModelBuilder b(1, 1, 4, 4);
        b.node(std::string(8000, 'Q'), {"x"}, "y", "long_op");
        const std::string message = import_error(b.bytes());
        CHECK_THAT(message, Contains("'QQQQ") && Contains("... (8000 bytes)"));
        CHECK(message.size() < 2500);  // the list of supported ops is most of it
    }
    {  // a NUL in a name cut the message off before the reason
        ModelBuilder b(1, 1, 4, 4);
        b.node("Relu", {std::string("in\0put", 6)}, "y", std::string("bad\0name", 8));
        const std::string message = import_error(b.bytes());
        CHECK_THAT(message, Contains("'bad\\x00name'") && Contains("'in\\x00put'") &&
                                Contains("is not the graph input"));
        CHECK(message.find('\0') == std::string::npos);
    }
    {  // control characters and ANSI escape sequences went to the terminal raw
        ModelBuilder b(1, 1, 4, 4);
        b.node("Relu", {"\x1b[31mred\x1b[0m\nnext line\r"}, "y", "relu\x07");
        const std::string message = import_error(b.bytes());
        CHECK(one_printable_line(message));
        CHECK_THAT(message, Contains("\\x1b[31mred") && Contains("\\x0anext line\\x0d") &&
                                Contains("'relu\\x07'"));
    }
}

// 300 tensors of a 2^31 - 1 element input's size, all live at their Sum: 2.4 TiB. A chain of
// ReLUs, each summed: 300 ReLUs of the input itself would be one (the loader drops an op that
// an earlier one computes).
std::string huge_sum_model() {
    ModelBuilder b(1, 1, 46340, 46340);
    std::vector<std::string> copies;
    for (int i = 0; i < 300; ++i) {
        const std::string input = copies.empty() ? "x" : copies.back();
        copies.push_back(fmt::format("r{}", i));
        b.node("Relu", {input}, copies.back(), copies.back());
    }
    b.node("Sum", copies, "y", "sum");
    return b.bytes();
}

TEST_CASE("a model needing more memory than the machine has is refused before it runs",
          "[onnx][hostile]") {
    const Graph graph = import_onnx_bytes(huge_sum_model(), "m.onnx");
    const int64_t tensor = int64_t(46340) * 46340 * 4;
    const MemoryNeeds needs = reference_memory_needs(graph);
    CHECK(needs.inputs == tensor);
    CHECK(needs.weights == 0);                // imported: the weights are already held
    CHECK(needs.activations == 301 * tensor);  // every copy and the sum at once
    CHECK_THROWS_WITH(
        require_host_memory(needs.total(), "the test", HostMemoryLimit{int64_t(79) << 30, "free"}),
        Contains("needs 2.4 TiB of host memory for the test; this machine has 79.0 GiB free"));
    CHECK_NOTHROW(require_host_memory(needs.total(), "the test", std::nullopt));
}

#ifdef IOSTUNE_EXE
namespace {

struct Exit {
    int code = -1;  // -1: a signal
    std::string output;
};

Exit iostune_cli(const std::string& args) {
    Exit r;
    FILE* pipe = popen(fmt::format("'{}' {} 2>&1", IOSTUNE_EXE, args).c_str(), "r");
    REQUIRE(pipe);
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) r.output.append(buffer, n);
    const int status = pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::filesystem::path hostile_dir() {
    const auto dir = std::filesystem::path(IOSTUNE_BINARY_DIR) / "tests" / "onnx_hostile";
    std::filesystem::create_directories(dir);
    return dir;
}

std::string write_model(const std::string& name, const std::string& bytes) {
    const auto path = hostile_dir() / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path.string();
}

}  // namespace

TEST_CASE("iostune run: too large for the machine or for a tensor is exit 1 in one line",
          "[onnx][hostile][cli]") {
    const std::string out = (hostile_dir() / "out.bin").string();
    // Was `internal error: std::bad_alloc` (exit 3) after `show` passed.
    const std::string tall = write_model("tall.onnx", conv_model(1, 3, 81979388, 64).bytes());
    // Needs terabytes at run time, though each tensor is within cuDNN's limit.
    const std::string sum = write_model("sum.onnx", huge_sum_model());
    for (const auto& [model, expected] :
         {std::pair{tall, std::string("1x3x81979388x64")},
          std::pair{sum, std::string("needs 2.4 TiB of host memory")}}) {
        const Exit r = iostune_cli(fmt::format("run --model '{}' --backend cpu --output '{}'",
                                               model, out));
        INFO(r.output);
        CHECK(r.code == 1);
        CHECK_THAT(r.output, Contains("iostune: error: ") && Contains(expected));
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    }
    const Exit show = iostune_cli(fmt::format("show '{}'", sum));  // no tensor is allocated
    INFO(show.output);
    CHECK(show.code == 0);
}

TEST_CASE("iostune: a name with control characters and a NUL prints as one line",
          "[onnx][hostile][cli]") {
    ModelBuilder b(1, 1, 4, 4);
    b.node("Relu", {std::string("a\0b\n\x1b[2J", 8)}, "y", "clear\x1b[2J");
    const std::string model = write_model("names.onnx", b.bytes());
    const Exit r = iostune_cli(fmt::format("show '{}'", model));
    INFO(r.output);
    CHECK(r.code == 1);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_THAT(r.output, Contains("'a\\x00b\\x0a\\x1b[2J'") && Contains("is not the graph input"));
    CHECK(r.output.find('\x1b') == std::string::npos);
}
#endif
