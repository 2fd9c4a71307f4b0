// The JSON model format: export, import with validation, and the external weights file.
// The schema is documented in docs/model-format.md; every import error names the file, the JSON
// location of the problem (e.g. "ops[12].attrs.stride_h") and what is wrong.
#include "src/model_json.h"

#include <fmt/format.h>

#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <sstream>
#include <variant>
#include <vector>

#include "src/attr_fields.h"
#include "src/error.h"
#include "src/quoted.h"
#include "src/operator_info.h"

namespace iostune {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "iostune-model";
constexpr int kVersion = 1;
constexpr const char* kInputRef = "input";
constexpr const char* kWeightsDtype = "float32";
constexpr const char* kWeightsLayout =
    "per op in id order, param_shapes() order, row-major, little-endian";

std::string valid_kinds() {
    std::vector<std::string> names;
    for (int k = 0; k < kOpKindCount; ++k) names.emplace_back(to_string(OpKind(k)));
    return fmt::format("{}", fmt::join(names, ", "));
}

// Reads one model document; every failure is thrown as "<source>: <location>: <problem>".
class Reader {
public:
    explicit Reader(const std::string& source) : source_(source) {}

    [[noreturn]] void fail(const std::string& location, const std::string& problem) const {
        if (location.empty()) throw Error(fmt::format("{}: {}", source_, problem));
        throw Error(fmt::format("{}: {}: {}", source_, location, problem));
    }

    static std::string describe(const json& value) {
        std::string text = value.dump();
        if (text.size() > 40) text = text.substr(0, 37) + "...";
        return fmt::format("{} {}", value.type_name(), text);
    }

    const json& field(const json& object, const char* key, const std::string& location) const {
        const auto it = object.find(key);
        if (it == object.end()) fail(join(location, key), "missing required field");
        return *it;
    }

    void expect_object(const json& value, const std::string& location) const {
        if (!value.is_object())
            fail(location, fmt::format("expected an object, got {}", describe(value)));
    }

    void only_keys(const json& object, const std::string& location,
                   const std::vector<std::string>& allowed) const {
        for (const auto& [key, value] : object.items()) {
            bool known = false;
            for (const auto& name : allowed) known = known || key == name;
            if (!known)
                fail(join(location, key),
                     fmt::format("unknown field (valid fields here: {})", fmt::join(allowed, ", ")));
        }
    }

    int integer(const json& value, const std::string& location) const {
        if (!value.is_number_integer())
            fail(location, fmt::format("expected an integer, got {}", describe(value)));
        if (value.is_number_unsigned() ? value.get<uint64_t>() > uint64_t(INT_MAX)
                                       : value.get<int64_t>() < INT_MIN ||
                                             value.get<int64_t>() > INT_MAX)
            fail(location, fmt::format("integer {} is out of range", value.dump()));
        return int(value.get<int64_t>());
    }

    bool boolean(const json& value, const std::string& location) const {
        if (!value.is_boolean())
            fail(location, fmt::format("expected true or false, got {}", describe(value)));
        return value.get<bool>();
    }

    float real(const json& value, const std::string& location) const {
        if (!value.is_number())
            fail(location, fmt::format("expected a number, got {}", describe(value)));
        const double v = value.get<double>();
        if (!std::isfinite(v) || std::abs(v) > double(FLT_MAX))
            fail(location, fmt::format("number {} is not a finite float", value.dump()));
        return float(v);
    }

    template <class E>
    E enumerator(const json& value, const std::string& location) const {
        const std::string name = string(value, location);
        const auto parsed = attr_enum_from_string<E>(name);
        if (!parsed)
            fail(location, fmt::format("unknown value \"{}\" (valid values: {})", name,
                                       fmt::join(attr_enum_names<E>(), ", ")));
        return *parsed;
    }

    std::string string(const json& value, const std::string& location) const {
        if (!value.is_string())
            fail(location, fmt::format("expected a string, got {}", describe(value)));
        return value.get<std::string>();
    }

    static std::string join(const std::string& location, const std::string& key) {
        return location.empty() ? key : location + "." + key;
    }

private:
    std::string source_;
};

Shape read_shape(const Reader& r, const json& input, const std::string& loc) {
    r.expect_object(input, loc);
    r.only_keys(input, loc, {"channels", "height", "width"});
    Shape shape{1, 0, 0, 0};
    shape.c = r.integer(r.field(input, "channels", loc), loc + ".channels");
    shape.h = r.integer(r.field(input, "height", loc), loc + ".height");
    shape.w = r.integer(r.field(input, "width", loc), loc + ".width");
    for (auto [value, key] : {std::pair{shape.c, "channels"}, std::pair{shape.h, "height"},
                              std::pair{shape.w, "width"}})
        if (value <= 0) r.fail(Reader::join(loc, key), fmt::format("must be positive, got {}", value));
    return shape;
}

Shape read_input(const Reader& r, const json& doc) {
    return read_shape(r, r.field(doc, "input", ""), "input");
}

// "input" is the graph's first input, "input:K" its input K (a model set with separate inputs).
std::string input_ref(int id) {
    return id == kGraphInput ? std::string(kInputRef)
                             : fmt::format("{}:{}", kInputRef, graph_input_index(id));
}

std::optional<int> parse_input_ref(const std::string& text, int input_count) {
    for (int k = 0; k < input_count; ++k)
        if (text == input_ref(graph_input_id(k))) return graph_input_id(k);
    return std::nullopt;
}

// A member's output ops: "outputs", an array of op ids; files written before members could have
// several outputs name one as "output".
std::vector<int> read_member_outputs(const Reader& r, const json& member, const std::string& loc) {
    const auto many = member.find("outputs");
    const auto one = member.find("output");
    if ((many == member.end()) == (one == member.end()))
        r.fail(loc, "give the member's output ops as \"outputs\": [op ids] (or one \"output\")");
    if (one != member.end()) return {r.integer(*one, loc + ".output")};
    if (!many->is_array() || many->empty())
        r.fail(loc + ".outputs", "expected a non-empty array of op ids");
    std::vector<int> outputs;
    for (size_t k = 0; k < many->size(); ++k)
        outputs.push_back(r.integer((*many)[k], fmt::format("{}.outputs[{}]", loc, k)));
    return outputs;
}

// A model set's extra inputs, outputs and members (graph.h); absent for a single model.
void read_set_fields(const Reader& r, const json& doc, Graph& graph) {
    if (auto it = doc.find("outputs"); it != doc.end()) {
        if (!it->is_array() || it->empty())
            r.fail("outputs", "expected a non-empty array of op ids");
        std::vector<int> outputs;
        for (size_t i = 0; i < it->size(); ++i)
            outputs.push_back(r.integer((*it)[i], fmt::format("outputs[{}]", i)));
        try {
            graph.set_outputs(std::move(outputs));
        } catch (const Error& e) {
            r.fail("outputs", e.what());
        }
    }
    if (auto it = doc.find("members"); it != doc.end()) {
        if (!it->is_array()) r.fail("members", "expected an array");
        std::vector<GraphMember> members;
        for (size_t i = 0; i < it->size(); ++i) {
            const json& m = (*it)[i];
            const std::string loc = fmt::format("members[{}]", i);
            r.expect_object(m, loc);
            r.only_keys(m, loc, {"name", "fingerprint", "first_op", "end_op", "input", "outputs",
                                 "output"});
            GraphMember member;
            member.name = r.string(r.field(m, "name", loc), loc + ".name");
            member.fingerprint = r.string(r.field(m, "fingerprint", loc), loc + ".fingerprint");
            member.first_op = r.integer(r.field(m, "first_op", loc), loc + ".first_op");
            member.end_op = r.integer(r.field(m, "end_op", loc), loc + ".end_op");
            const std::string input = r.string(r.field(m, "input", loc), loc + ".input");
            const auto input_id = parse_input_ref(input, graph.input_count());
            if (!input_id) r.fail(loc + ".input", fmt::format("unknown input \"{}\"", input));
            member.input = *input_id;
            member.outputs = read_member_outputs(r, m, loc);
            members.push_back(std::move(member));
        }
        try {
            graph.set_members(std::move(members));
        } catch (const Error& e) {
            r.fail("members", e.what());
        }
    }
}

// MaxPool ignores count_include_pad, so a hand-written maxpool may leave it out.
bool optional_attr(OpKind kind, const std::string& name) {
    return kind == OpKind::MaxPool && name == "count_include_pad";
}

// The "attrs" object of one attribute struct (fields added later left out while unset).
template <class Attrs>
json attrs_json(const Attrs& attrs) {
    json object = json::object();
    for_each_attr_field(attrs, [&](const char* name, const auto& value) {
        using Field = std::remove_cvref_t<decltype(value)>;
        if (omitted_field(name, value)) return;
        if constexpr (is_attr_enum_v<Field>) object[name] = to_string(value);
        else if constexpr (is_nested_attrs_v<Field>) object[name] = attrs_json(*value);
        else object[name] = value;
    });
    return object;
}

// Reads the fields of one attribute struct from `object` (an op's "attrs", or a nested one).
template <class Attrs>
void read_fields(const Reader& r, const json& object, OpKind kind, const std::string& location,
                 Attrs& attrs) {
    std::vector<std::string> names;
    for_each_attr_field(attrs, [&](const char* n, auto&) { names.emplace_back(n); });
    r.expect_object(object, location);
    r.only_keys(object, location, names);
    for_each_attr_field(attrs, [&](const char* name, auto& value) {
        using Field = std::remove_reference_t<decltype(value)>;
        const std::string loc = Reader::join(location, name);
        const auto found = object.find(name);
        if (found == object.end()) {
            if (optional_attr(kind, name) || omitted_when_false(name) || is_nested_attrs_v<Field>)
                return;
            r.fail(loc, "missing required field");
        }
        if constexpr (std::is_same_v<Field, bool>) {
            value = r.boolean(*found, loc);
        } else if constexpr (std::is_same_v<Field, float>) {
            value = r.real(*found, loc);
        } else if constexpr (is_attr_enum_v<Field>) {
            value = r.enumerator<Field>(*found, loc);
        } else if constexpr (is_nested_attrs_v<Field>) {
            typename Field::value_type nested;
            read_fields(r, *found, OpKind::Activation, loc, nested);
            value = nested;
        } else {
            value = r.integer(*found, loc);
        }
    });
}

OpAttrs read_attrs(const Reader& r, const json& op, OpKind kind, const std::string& location) {
    OpAttrs attrs = default_attrs(kind);
    const std::string attrs_loc = Reader::join(location, "attrs");
    const auto it = op.find("attrs");
    if (it == op.end()) {
        bool has_fields = false;
        std::visit([&](auto& a) { for_each_attr_field(a, [&](const char*, auto&) { has_fields = true; }); },
                   attrs);
        if (has_fields) r.fail(attrs_loc, "missing required field");
        return attrs;
    }
    std::visit([&](auto& a) { read_fields(r, *it, kind, attrs_loc, a); }, attrs);
    return attrs;
}

std::vector<int> read_inputs(const Reader& r, const json& op, int index, int op_count,
                             int input_count, const std::string& location) {
    const std::string inputs_loc = Reader::join(location, "inputs");
    const json& inputs = r.field(op, "inputs", location);
    if (!inputs.is_array())
        r.fail(inputs_loc, fmt::format("expected an array of op ids or \"input\", got {}",
                                       Reader::describe(inputs)));
    std::vector<int> ids;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const json& ref = inputs[i];
        const std::string loc = fmt::format("{}[{}]", inputs_loc, i);
        if (ref.is_string()) {
            const auto input_id = parse_input_ref(ref.get<std::string>(), input_count);
            if (!input_id)
                r.fail(loc, fmt::format("unknown tensor {}; use an op id or \"input\"", ref.dump()));
            ids.push_back(*input_id);
            continue;
        }
        if (!ref.is_number_integer())
            r.fail(loc, fmt::format("expected an op id or \"input\", got {}", Reader::describe(ref)));
        const int64_t src = ref.get<int64_t>();
        if (src < 0 || src >= op_count)
            r.fail(loc, fmt::format("dangling edge: {} is not an op id (ids are 0..{})", ref.dump(),
                                    op_count - 1));
        if (src == index)
            r.fail(loc, fmt::format("cyclic edge: op {} reads its own output", index));
        if (src > index)
            r.fail(loc, fmt::format("forward edge: op {} reads op {}, which comes later (inputs must "
                                    "be earlier ops; a later one would allow a cycle)",
                                    index, src));
        ids.push_back(int(src));
    }
    return ids;
}

void read_op(const Reader& r, const json& op, int index, int op_count, Graph& graph) {
    const std::string location = fmt::format("ops[{}]", index);
    r.expect_object(op, location);
    r.only_keys(op, location, {"id", "name", "op", "inputs", "attrs", "cell"});
    const int id = r.integer(r.field(op, "id", location), location + ".id");
    if (id >= 0 && id < index)
        r.fail(location + ".id", fmt::format("duplicate id {} (already used by ops[{}] {})", id, id,
                                             quoted_name(graph.op(id).name)));
    if (id != index)
        r.fail(location + ".id", fmt::format("id {} does not match the op's position {} (ops are "
                                             "listed in id order with ids 0, 1, 2, ...)",
                                             id, index));
    const std::string name = r.string(r.field(op, "name", location), location + ".name");
    if (name.empty()) r.fail(location + ".name", "must not be empty");
    const std::string kind_name = r.string(r.field(op, "op", location), location + ".op");
    const auto kind = op_kind_from_string(kind_name);
    if (!kind)
        r.fail(location + ".op", fmt::format("unknown operator {} (valid operators: {})",
                                             quoted_name(kind_name),
                                             valid_kinds()));
    std::vector<int> inputs = read_inputs(r, op, index, op_count, graph.input_count(), location);
    OpAttrs attrs = read_attrs(r, op, *kind, location);
    int cell = -1;
    if (const auto it = op.find("cell"); it != op.end()) {
        cell = r.integer(*it, location + ".cell");
        if (cell < -1) r.fail(location + ".cell", fmt::format("must be -1 (none) or >= 0, got {}", cell));
    }
    try {
        graph.add(*kind, std::move(attrs), std::move(inputs), name, cell);
    } catch (const Error& e) {
        r.fail(location, e.what());
    }
}

int64_t total_param_count(const Graph& graph) {
    int64_t total = 0;
    for (const Op& op : graph.ops()) total += param_count(graph, op.id);
    return total;
}

// IEEE float32 bits in little-endian byte order, whatever the host's order.
void append_le(std::string& out, float value) {
    uint32_t bits = std::bit_cast<uint32_t>(value);
    for (int i = 0; i < 4; ++i) out.push_back(char((bits >> (8 * i)) & 0xff));
}

float read_le(const unsigned char* bytes) {
    uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits |= uint32_t(bytes[i]) << (8 * i);
    return std::bit_cast<float>(bits);
}

// A model names its weights file relative to its own folder, and the file must be a regular
// file inside that folder: a model file from a stranger cannot make iostune read a device
// (/dev/zero), a directory, or any file elsewhere on the machine.
fs::path weights_path_inside(const Reader& r, const std::string& file, const std::string& base_dir) {
    const fs::path given(file);
    if (file.empty() || given.is_absolute() || given.has_root_name())
        r.fail("weights.file", fmt::format("'{}' is not a path relative to the model's folder; "
                                           "put the weights file next to the model and name it "
                                           "by its relative path",
                                           file));
    const fs::path base = fs::path(base_dir.empty() ? "." : base_dir);
    const fs::path path = base / given;
    std::error_code ec;
    const fs::path real_base = fs::weakly_canonical(base, ec);
    const fs::path real = ec ? fs::path() : fs::weakly_canonical(path, ec);
    const fs::path inside = ec ? fs::path() : real.lexically_relative(real_base);
    if (ec || inside.empty() || *inside.begin() == "..")
        r.fail("weights.file", fmt::format("weights file '{}' lies outside the model's folder "
                                           "'{}'; weights must be inside it (move the file next "
                                           "to the model)",
                                           file, base.string()));
    if (!fs::exists(real, ec))
        r.fail("weights.file", fmt::format("cannot open weights file '{}': {}", path.string(),
                                           std::strerror(ENOENT)));
    if (!fs::is_regular_file(real, ec))
        r.fail("weights.file", fmt::format("weights file '{}' is not a regular file (a "
                                           "directory, a device or a pipe); name the raw float32 "
                                           "file the model was exported with",
                                           path.string()));
    return path;
}

void read_weights(const Reader& r, const json& doc, const std::string& base_dir, Graph& graph) {
    const auto it = doc.find("weights");
    if (it == doc.end()) return;
    const json& weights = *it;
    r.expect_object(weights, "weights");
    r.only_keys(weights, "weights", {"file", "dtype", "layout"});
    const std::string file = r.string(r.field(weights, "file", "weights"), "weights.file");
    const std::string dtype = r.string(r.field(weights, "dtype", "weights"), "weights.dtype");
    if (dtype != kWeightsDtype)
        r.fail("weights.dtype", fmt::format("unsupported dtype '{}' (only \"{}\")", dtype, kWeightsDtype));
    const std::string layout = r.string(r.field(weights, "layout", "weights"), "weights.layout");
    if (layout != kWeightsLayout)
        r.fail("weights.layout", fmt::format("unsupported layout '{}' (only \"{}\")", layout, kWeightsLayout));

    const fs::path path = weights_path_inside(r, file, base_dir);
    // The size is checked before anything is read: a wrong file (or a huge one) is refused
    // without allocating for it.
    const int64_t needed = total_param_count(graph);
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec)
        r.fail("weights.file", fmt::format("cannot read the size of weights file '{}': {}",
                                           path.string(), ec.message()));
    if (int64_t(size) != needed * 4)
        r.fail("weights.file", fmt::format("weights file '{}' has {} bytes, but the model has {} "
                                           "float32 parameters ({} bytes); was it written for "
                                           "another model?",
                                           path.string(), size, needed, needed * 4));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        r.fail("weights.file", fmt::format("cannot open weights file '{}': {}", path.string(),
                                           std::strerror(errno)));
    std::string bytes(size_t(size), '\0');
    in.read(bytes.data(), std::streamsize(size));
    if (in.gcount() != std::streamsize(size))
        r.fail("weights.file", fmt::format("weights file '{}' ended after {} of its {} bytes",
                                           path.string(), in.gcount(), size));

    const auto* cursor = reinterpret_cast<const unsigned char*>(bytes.data());
    std::vector<std::vector<ParamTensor>> params(size_t(graph.size()));
    for (const Op& op : graph.ops()) {
        for (auto& dims : param_shapes(graph, op.id)) {
            ParamTensor tensor;
            int64_t count = 1;
            for (int d : dims) count *= d;
            tensor.dims = std::move(dims);
            tensor.values.resize(size_t(count));
            for (float& v : tensor.values) {
                v = read_le(cursor);
                cursor += 4;
            }
            params[size_t(op.id)].push_back(std::move(tensor));
        }
    }
    graph.set_params(std::move(params), WeightsState::Loaded);
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        throw Error(fmt::format("cannot write '{}': {} (does its folder exist and is it writable?)",
                                path.string(), std::strerror(errno)));
    out.write(text.data(), std::streamsize(text.size()));
    out.close();
    if (!out) throw Error(fmt::format("writing '{}' failed: {}", path.string(), std::strerror(errno)));
}

}  // namespace

json graph_to_json(const Graph& graph, const std::string& weights_file) {
    const Shape& in = graph.input_shape();
    json doc = json::object();
    doc["format"] = kFormat;
    doc["version"] = kVersion;
    doc["name"] = graph.name();
    doc["input"] = {{"channels", in.c}, {"height", in.h}, {"width", in.w}};
    json ops = json::array();
    for (const Op& op : graph.ops()) {
        json inputs = json::array();
        for (int src : op.inputs) {
            if (is_graph_input(src)) inputs.push_back(input_ref(src));
            else inputs.push_back(src);
        }
        json attrs = std::visit([](const auto& a) { return attrs_json(a); }, op.attrs);
        json entry = {{"id", op.id}, {"name", op.name}, {"op", to_string(op.kind)},
                      {"inputs", std::move(inputs)}, {"attrs", std::move(attrs)}};
        if (op.cell >= 0) entry["cell"] = op.cell;
        ops.push_back(std::move(entry));
    }
    doc["ops"] = std::move(ops);
    if (graph.input_count() > 1) {
        json extra = json::array();
        for (int k = 1; k < graph.input_count(); ++k) {
            const Shape& s = graph.input_shape(k);
            extra.push_back({{"channels", s.c}, {"height", s.h}, {"width", s.w}});
        }
        doc["extra_inputs"] = std::move(extra);
    }
    if (graph.output_count() > 1 || graph.output_id() != graph.size() - 1)
        doc["outputs"] = graph.outputs();
    if (!graph.members().empty()) {
        json members = json::array();
        for (const GraphMember& m : graph.members())
            members.push_back({{"name", m.name}, {"fingerprint", m.fingerprint},
                               {"first_op", m.first_op}, {"end_op", m.end_op},
                               {"input", input_ref(m.input)}, {"outputs", m.outputs}});
        doc["members"] = std::move(members);
    }
    if (!weights_file.empty())
        doc["weights"] = {{"file", weights_file}, {"dtype", kWeightsDtype}, {"layout", kWeightsLayout}};
    return doc;
}

Graph graph_from_json(const json& doc, const std::string& source, const std::string& base_dir) {
    const Reader r(source);
    if (!doc.is_object())
        r.fail("", fmt::format("expected a JSON object at the top level, got {}",
                               Reader::describe(doc)));
    r.only_keys(doc, "", {"format", "version", "name", "input", "extra_inputs", "ops", "outputs",
                          "members", "weights"});
    const std::string format = r.string(r.field(doc, "format", ""), "format");
    if (format != kFormat)
        r.fail("format", fmt::format("expected \"{}\", got \"{}\" (not an iostune model file)", kFormat,
                                     format));
    const int version = r.integer(r.field(doc, "version", ""), "version");
    if (version != kVersion)
        r.fail("version", fmt::format("unsupported version {} (this iostune reads version {})", version,
                                      kVersion));
    const std::string name = r.string(r.field(doc, "name", ""), "name");
    if (name.empty()) r.fail("name", "must not be empty");
    Graph graph(name, read_input(r, doc));
    if (auto it = doc.find("extra_inputs"); it != doc.end()) {
        if (!it->is_array()) r.fail("extra_inputs", "expected an array of input shapes");
        for (size_t k = 0; k < it->size(); ++k)
            graph.add_input(read_shape(r, (*it)[k], fmt::format("extra_inputs[{}]", k)));
    }

    const json& ops = r.field(doc, "ops", "");
    if (!ops.is_array()) r.fail("ops", fmt::format("expected an array, got {}", Reader::describe(ops)));
    if (ops.empty()) r.fail("ops", "a model needs at least one operator");
    for (size_t i = 0; i < ops.size(); ++i) read_op(r, ops[i], int(i), int(ops.size()), graph);
    read_set_fields(r, doc, graph);

    read_weights(r, doc, base_dir, graph);
    return graph;
}

void save_model(const Graph& graph, const std::string& path, const std::string& weights_path) {
    std::string weights_ref;
    if (!weights_path.empty()) {
        if (graph.weights_state() == WeightsState::Absent)
            throw Error(fmt::format("model '{}' has no weights to write to '{}'; initialise them first "
                                    "(e.g. iostune export --seed N)",
                                    graph.name(), weights_path));
        std::string bytes;
        bytes.reserve(size_t(total_param_count(graph)) * 4);
        for (const auto& op_params : graph.params())
            for (const ParamTensor& tensor : op_params)
                for (float v : tensor.values) append_le(bytes, v);
        // Recorded relative to the model file, so the pair can be moved together (and a model
        // may only name weights inside its own folder: read_weights).
        const fs::path model_dir = fs::absolute(path).lexically_normal().parent_path();
        const fs::path relative =
            fs::absolute(weights_path).lexically_normal().lexically_relative(model_dir);
        if (relative.empty() || *relative.begin() == "..")
            throw Error(fmt::format("the weights file '{}' must be in the model's folder '{}' "
                                    "(or below it), so the model can name it by a relative path; "
                                    "choose a weights path next to '{}'",
                                    weights_path, model_dir.string(), path));
        weights_ref = relative.string();
        write_text(weights_path, bytes);
    }
    write_text(path, graph_to_json(graph, weights_ref).dump(2) + "\n");
}

Graph load_model(const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        throw Error(fmt::format("model file '{}' not found (or not a regular file)", path));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(fmt::format("cannot open model file '{}': {}", path, std::strerror(errno)));
    std::ostringstream text;
    text << in.rdbuf();
    json doc;
    try {
        doc = json::parse(text.str());
    } catch (const json::parse_error& e) {
        // e.what() is "[json.exception.parse_error.N] parse error at line L, column C: ...".
        std::string what = e.what();
        if (const auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
        throw Error(fmt::format("{}: malformed JSON (byte {}): {}", path, e.byte, what));
    }
    return graph_from_json(doc, path, fs::path(path).parent_path().string());
}

}  // namespace iostune
