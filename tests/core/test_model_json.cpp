// The JSON model format: exact round-trips (structure and weights), the fingerprint's
// invariances, and one clear located error for every kind of bad input.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "src/error.h"
#include "src/model_json.h"
#include "src/operator_info.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace iostune;

namespace {

fs::path scratch_dir() {
    const fs::path dir = fs::path(IOSTUNE_BINARY_DIR) / "test-scratch" / "model_json";
    fs::create_directories(dir);
    return dir;
}

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

// Every operator kind, a fork/join, a multi-input concat and add, and NASNet-style cells.
Graph every_kind_graph(int batch = 1) {
    Graph g("every_kind", {batch, 3, 17, 15});
    ConvAttrs stem;
    stem.out_channels = 8;
    stem.kernel_h = stem.kernel_w = 3;
    stem.stride_h = 2;
    stem.pad_h = stem.pad_w = 1;
    stem.relu = true;
    const int c0 = g.add(OpKind::Conv, stem, {kGraphInput}, "stem", 0);
    SepConvAttrs sep;
    sep.out_channels = 8;
    sep.kernel = 5;
    sep.pad = 2;
    const int s1 = g.add(OpKind::SepConv, sep, {c0}, "sep", 1);
    PoolAttrs maxp;
    maxp.kernel_h = maxp.kernel_w = 3;
    maxp.pad_h = maxp.pad_w = 1;
    maxp.ceil_mode = true;
    const int m2 = g.add(OpKind::MaxPool, maxp, {c0}, "max", 1);
    PoolAttrs avgp = maxp;
    avgp.ceil_mode = false;
    avgp.count_include_pad = false;
    const int a3 = g.add(OpKind::AvgPool, avgp, {c0}, "avg", 1);
    ConvAttrs grouped;
    grouped.out_channels = 8;
    grouped.groups = 4;
    grouped.bias = false;
    const int g4 = g.add(OpKind::Conv, grouped, {c0}, "grouped", 1);
    const int sum = g.add(OpKind::Add, AddAttrs{true}, {s1, m2, a3}, "sum", 1);
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {sum, g4, c0}, "cat", 1);
    const int r = g.add(OpKind::Relu, ReluAttrs{}, {cat}, "relu", 2);
    const int id = g.add(OpKind::Identity, IdentityAttrs{}, {r}, "same", 2);
    PoolAttrs global;
    global.global = true;
    const int gp = g.add(OpKind::AvgPool, global, {id}, "gap", 2);
    const int fc = g.add(OpKind::Linear, LinearAttrs{10, true}, {gp}, "fc");
    g.add(OpKind::Softmax, SoftmaxAttrs{}, {fc}, "prob");
    return g;
}

void require_same_structure(const Graph& a, const Graph& b) {
    REQUIRE(a.name() == b.name());
    REQUIRE(a.input_shape() == b.input_shape());
    REQUIRE(a.size() == b.size());
    for (int i = 0; i < a.size(); ++i) {
        INFO("op " << i << " '" << a.op(i).name << "'");
        CHECK(a.op(i).name == b.op(i).name);
        CHECK(a.op(i).kind == b.op(i).kind);
        CHECK(a.op(i).attrs == b.op(i).attrs);
        CHECK(a.op(i).inputs == b.op(i).inputs);
        CHECK(a.op(i).cell == b.op(i).cell);
        CHECK(a.op(i).output == b.op(i).output);
    }
    CHECK(fingerprint(a) == fingerprint(b));
}

// The error message graph_from_json gives for `doc`.
std::string import_error(const json& doc) {
    try {
        graph_from_json(doc, "bad.json");
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("the document was accepted: " << doc.dump());
    return "";
}

std::string load_error(const fs::path& path) {
    try {
        load_model(path.string());
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("'" << path.string() << "' was accepted");
    return "";
}

}  // namespace

TEST_CASE("export writes the documented schema", "[model_json]") {
    const json doc = graph_to_json(every_kind_graph(4), "w.bin");
    CHECK(doc["format"] == "iostune-model");
    CHECK(doc["version"] == 1);
    CHECK(doc["input"] == json({{"channels", 3}, {"height", 17}, {"width", 15}}));
    CHECK_FALSE(doc.contains("batch"));
    REQUIRE(doc["ops"].size() == 12);
    const json& stem = doc["ops"][0];
    CHECK(stem["op"] == "conv");
    CHECK(stem["inputs"] == json::array({"input"}));
    CHECK(stem["attrs"]["stride_h"] == 2);
    CHECK(stem["attrs"]["relu"] == true);
    CHECK(stem["cell"] == 0);
    CHECK(doc["ops"][5]["inputs"] == json::array({1, 2, 3}));
    CHECK_FALSE(doc["ops"][10].contains("cell"));
    CHECK(doc["weights"]["file"] == "w.bin");
    CHECK(doc["weights"]["dtype"] == "float32");
}

TEST_CASE("JSON round-trip keeps names, attributes, edges, cells and shapes", "[model_json]") {
    const Graph original = every_kind_graph();
    const Graph imported = graph_from_json(graph_to_json(original), "mem.json");
    require_same_structure(original, imported);
    CHECK(imported.weights_state() == WeightsState::Absent);

    SECTION("a maxpool may omit count_include_pad, which it ignores") {
        json doc = graph_to_json(original);
        doc["ops"][2]["attrs"].erase("count_include_pad");
        CHECK(graph_from_json(doc, "mem.json").op(2).attrs == original.op(2).attrs);
    }
    SECTION("attribute-free ops may omit attrs") {
        json doc = graph_to_json(original);
        doc["ops"][7].erase("attrs");
        CHECK(graph_from_json(doc, "mem.json").op(7).kind == OpKind::Relu);
    }
}

TEST_CASE("every zoo model round-trips through a model file", "[model_json][zoo]") {
    const fs::path dir = scratch_dir();
    for (const std::string& name : zoo_model_names()) {
        INFO(name);
        const Graph original = build_zoo_model(name, 2);
        const fs::path path = dir / (name + ".json");
        save_model(original, path.string());
        const Graph loaded = load_model(path.string()).with_batch(2);
        require_same_structure(original, loaded);
    }
}

TEST_CASE("weights round-trip bit-exactly through the raw float32 file", "[model_json]") {
    const fs::path dir = scratch_dir();
    Graph original = every_kind_graph();
    init_random_weights(original, 1234);
    const fs::path model = dir / "weighted.json";
    const fs::path weights = dir / "weighted.bin";
    save_model(original, model.string(), weights.string());

    const GraphTotals t = totals(original);
    REQUIRE(fs::file_size(weights) == uint64_t(t.params) * 4);
    // The file is documented as little-endian float32 starting with op 0's first tensor.
    std::ifstream raw(weights, std::ios::binary);
    unsigned char first[4];
    raw.read(reinterpret_cast<char*>(first), 4);
    uint32_t bits;
    std::memcpy(&bits, &original.params_of(0)[0].values[0], 4);
    CHECK(first[0] == (bits & 0xff));
    CHECK(first[3] == (bits >> 24));

    const Graph loaded = load_model(model.string());
    CHECK(graph_to_json(original).at("ops") == graph_to_json(loaded).at("ops"));
    REQUIRE(loaded.weights_state() == WeightsState::Loaded);
    for (int id = 0; id < original.size(); ++id) {
        const auto& want = original.params_of(id);
        const auto& got = loaded.params_of(id);
        REQUIRE(want.size() == got.size());
        for (size_t k = 0; k < want.size(); ++k) {
            CHECK(want[k].dims == got[k].dims);
            REQUIRE(want[k].values.size() == got[k].values.size());
            CHECK(std::memcmp(want[k].values.data(), got[k].values.data(),
                              want[k].values.size() * sizeof(float)) == 0);
        }
    }

    SECTION("the weights file is found relative to the model file") {
        const json doc = json::parse(std::ifstream(model));
        CHECK(doc["weights"]["file"] == "weighted.bin");
    }
    SECTION("saving weights the graph does not have is an error") {
        CHECK_THROWS_WITH(save_model(every_kind_graph(), (dir / "none.json").string(),
                                     (dir / "none.bin").string()),
                          Catch::Contains("has no weights"));
    }
}

TEST_CASE("the fingerprint keys structure only", "[model_json][fingerprint]") {
    const Graph base = every_kind_graph();
    const std::string fp = fingerprint(base);
    REQUIRE(fp.size() == 16);
    CHECK(fp.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(fingerprint(every_kind_graph()) == fp);

    SECTION("names and batch do not count") {
        json doc = graph_to_json(base);
        doc["name"] = "renamed";
        for (auto& op : doc["ops"]) op["name"] = "x" + op["name"].get<std::string>();
        CHECK(fingerprint(graph_from_json(doc, "mem.json")) == fp);
        CHECK(fingerprint(base.with_batch(32)) == fp);
    }
    SECTION("weights do not count") {
        Graph weighted = every_kind_graph();
        init_random_weights(weighted, 7);
        CHECK(fingerprint(weighted) == fp);
    }
    SECTION("a stride, an edge, a cell or the input size does") {
        json doc = graph_to_json(base);
        doc["ops"][0]["attrs"]["stride_w"] = 2;
        CHECK(fingerprint(graph_from_json(doc, "mem.json")) != fp);
        doc = graph_to_json(base);
        doc["ops"][6]["inputs"] = json::array({5, 4});
        CHECK(fingerprint(graph_from_json(doc, "mem.json")) != fp);
        doc = graph_to_json(base);
        doc["ops"][3]["cell"] = 2;
        CHECK(fingerprint(graph_from_json(doc, "mem.json")) != fp);
        doc = graph_to_json(base);
        doc["input"]["height"] = 19;
        CHECK(fingerprint(graph_from_json(doc, "mem.json")) != fp);
    }
    SECTION("the value is pinned: it keys stored schedules on every machine") {
        // FNV-1a 64 of the canonical text in docs/model-format.md, computed independently:
        //   "iostune-structure 1\ninput 3 8 8\nop 0 relu cell=-1 inputs=input\n"
        Graph tiny("tiny", {1, 3, 8, 8});
        tiny.add(OpKind::Relu, ReluAttrs{}, {kGraphInput}, "r");
        CHECK(fingerprint(tiny) == "a1ac7ad16a278faa");
    }
}

TEST_CASE("bad model documents give one located error each", "[model_json][errors]") {
    const json good = graph_to_json(every_kind_graph());
    json doc = good;

    SECTION("not an object") {
        CHECK_THAT(import_error(json::array({1, 2})),
                   Catch::Contains("bad.json") && Catch::Contains("expected a JSON object"));
    }
    SECTION("wrong format") {
        doc["format"] = "onnx";
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: format: expected \"iostune-model\""));
    }
    SECTION("wrong version") {
        doc["version"] = 2;
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: version: unsupported version 2"));
    }
    SECTION("unknown top-level field") {
        doc["batch"] = 8;
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: batch: unknown field"));
    }
    SECTION("missing input size") {
        doc["input"].erase("width");
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: input.width: missing required field"));
    }
    SECTION("non-positive input size") {
        doc["input"]["channels"] = 0;
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: input.channels: must be positive"));
    }
    SECTION("unknown operator, with the valid ones listed") {
        doc["ops"][1]["op"] = "conv3d";
        CHECK_THAT(import_error(doc),
                   Catch::StartsWith("bad.json: ops[1].op: unknown operator 'conv3d'") &&
                       Catch::Contains("conv, sepconv, maxpool, avgpool, concat, add, relu, linear, "
                                       "softmax, identity"));
    }
    SECTION("missing attribute") {
        doc["ops"][0]["attrs"].erase("stride_h");
        CHECK_THAT(import_error(doc),
                   Catch::StartsWith("bad.json: ops[0].attrs.stride_h: missing required field"));
    }
    SECTION("missing op field") {
        doc["ops"][4].erase("inputs");
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[4].inputs: missing required field"));
    }
    SECTION("wrong types") {
        doc["ops"][0]["attrs"]["stride_h"] = "2";
        CHECK_THAT(import_error(doc),
                   Catch::StartsWith("bad.json: ops[0].attrs.stride_h: expected an integer, got string"));
        doc = good;
        doc["ops"][0]["attrs"]["stride_h"] = 2.5;
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[0].attrs.stride_h: expected an integer"));
        doc = good;
        doc["ops"][0]["attrs"]["bias"] = 1;
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[0].attrs.bias: expected true or false"));
        doc = good;
        doc["ops"][0]["attrs"]["out_channels"] = 5000000000LL;
        CHECK_THAT(import_error(doc), Catch::Contains("ops[0].attrs.out_channels: integer 5000000000 is out of range"));
        doc = good;
        doc["ops"] = json::object();
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops: expected an array"));
    }
    SECTION("misspelt attribute") {
        doc["ops"][0]["attrs"]["strides"] = 2;
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[0].attrs.strides: unknown field") &&
                                          Catch::Contains("stride_h"));
    }
    SECTION("dangling edge") {
        doc["ops"][1]["inputs"] = json::array({99});
        CHECK_THAT(import_error(doc),
                   Catch::StartsWith("bad.json: ops[1].inputs[0]: dangling edge: 99 is not an op id"));
        doc["ops"][1]["inputs"] = json::array({"image"});
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[1].inputs[0]: unknown tensor \"image\""));
    }
    SECTION("forward and cyclic edges") {
        doc["ops"][1]["inputs"] = json::array({3});
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[1].inputs[0]: forward edge"));
        doc["ops"][1]["inputs"] = json::array({1});
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[1].inputs[0]: cyclic edge"));
    }
    SECTION("duplicate and mismatched ids") {
        doc["ops"][2]["id"] = 1;
        CHECK_THAT(import_error(doc),
                   Catch::StartsWith("bad.json: ops[2].id: duplicate id 1 (already used by ops[1] 'sep')"));
        doc = good;
        doc["ops"][2]["id"] = 7;
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[2].id: id 7 does not match"));
    }
    SECTION("shape mismatch, reported with the op's location and name") {
        doc["ops"][5]["inputs"] = json::array({1, 4, "input"});
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: ops[5]: op 'sum' (add): shape mismatch"));
    }
    SECTION("a bad weights section") {
        doc["weights"] = {{"file", "w.bin"}, {"dtype", "float16"}, {"layout", "row-major"}};
        CHECK_THAT(import_error(doc), Catch::StartsWith("bad.json: weights.dtype: unsupported dtype 'float16'"));
    }
}

TEST_CASE("bad model files give one located error each", "[model_json][errors]") {
    const fs::path dir = scratch_dir();

    SECTION("missing file") {
        CHECK_THAT(load_error(dir / "no-such-model.json"),
                   Catch::Contains("no-such-model.json") && Catch::Contains("not found"));
    }
    SECTION("malformed JSON, with the line and byte") {
        const fs::path path = dir / "malformed.json";
        write_file(path, "{\n  \"format\": \"iostune-model\",\n  \"version\" 1\n}\n");
        CHECK_THAT(load_error(path), Catch::StartsWith(path.string() + ": malformed JSON (byte ") &&
                                         Catch::Contains("line 3"));
    }
    SECTION("weights file missing or of the wrong size") {
        Graph g = every_kind_graph();
        init_random_weights(g, 3);
        const fs::path model = dir / "weights-check.json";
        const fs::path weights = dir / "weights-check.bin";
        save_model(g, model.string(), weights.string());
        fs::resize_file(weights, fs::file_size(weights) - 4);
        CHECK_THAT(load_error(model), Catch::StartsWith(model.string() + ": weights.file: weights file '") &&
                                          Catch::Contains("was it written for another model?"));
        fs::remove(weights);
        CHECK_THAT(load_error(model), Catch::StartsWith(model.string() + ": weights.file: cannot open weights file"));
    }
}

TEST_CASE("the example in docs/model-format.md is a valid model", "[model_json]") {
    const fs::path doc_path =
        fs::path(IOSTUNE_TEST_DATA_DIR).parent_path().parent_path() / "docs" / "model-format.md";
    std::ifstream in(doc_path);
    REQUIRE(in);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto start = text.find("```json\n");
    REQUIRE(start != std::string::npos);
    const auto end = text.find("```", start + 8);
    json doc = json::parse(text.substr(start + 8, end - start - 8));
    REQUIRE(doc.contains("weights"));
    doc.erase("weights");  // the example's tiny.bin does not exist
    const Graph g = graph_from_json(doc, doc_path.string());
    CHECK(g.size() == 6);
    CHECK(g.output_shape() == Shape{1, 10, 1, 1});
    CHECK(g.op(3).output == Shape{1, 24, 16, 16});
}

TEST_CASE("a model names only a regular weights file inside its own folder", "[model_json]") {
    const fs::path dir = scratch_dir() / "strangers";
    fs::remove_all(dir);
    fs::create_directories(dir / "sub");
    Graph g = every_kind_graph();
    init_random_weights(g, 7);
    const fs::path model = dir / "m.json";
    save_model(g, model.string(), (dir / "sub" / "w.bin").string());
    CHECK(load_model(model.string()).weights_state() == WeightsState::Loaded);  // below: fine
    json doc = json::parse(std::ifstream(model));
    CHECK(doc["weights"]["file"] == "sub/w.bin");

    // Each way of naming something else is one clear error, before anything is read.
    const auto refused = [&](const std::string& file, const std::string& why) {
        json bad = doc;
        bad["weights"]["file"] = file;
        std::ofstream(dir / "bad.json") << bad.dump();
        INFO(file);
        CHECK_THROWS_WITH(load_model((dir / "bad.json").string()), Catch::Contains(why));
    };
    refused("sub", "not a regular file");                   // a directory
    refused("/dev/zero", "not a path relative");           // absolute: a device
    refused((dir / "sub" / "w.bin").string(), "not a path relative");
    {  // climbing out and back into the folder still names a file inside it
        json back_in = doc;
        back_in["weights"]["file"] = "../strangers/sub/w.bin";
        std::ofstream(dir / "back_in.json") << back_in.dump();
        CHECK(load_model((dir / "back_in.json").string()).weights_state() == WeightsState::Loaded);
    }
    refused("../outside.bin", "outside the model's folder");
    refused("sub/../../outside.bin", "outside the model's folder");
    refused("missing.bin", "cannot open weights file");
    std::error_code ec;
    fs::create_symlink("/dev/zero", dir / "zero.bin", ec);
    if (!ec) refused("zero.bin", "outside the model's folder");  // a link out of the folder
    // A file of the wrong size is refused by its size: a huge sparse one is never read.
    {
        std::ofstream huge(dir / "huge.bin", std::ios::binary);
        huge.seekp((std::streamoff(1) << 34) - 1);
        huge.put('\0');
    }
    refused("huge.bin", "has 17179869184 bytes");
    fs::remove(dir / "huge.bin");

    // Exporting weights outside the model's folder is refused up front, writing nothing.
    const fs::path other = scratch_dir() / "strangers_other";
    fs::remove_all(other);
    fs::create_directories(other);
    CHECK_THROWS_WITH(save_model(g, (dir / "m2.json").string(), (other / "w.bin").string()),
                      Catch::Contains("must be in the model's folder"));
    CHECK_FALSE(fs::exists(other / "w.bin"));
    CHECK_FALSE(fs::exists(dir / "m2.json"));
}
