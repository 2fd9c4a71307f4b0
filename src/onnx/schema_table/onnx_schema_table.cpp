// Build-time tool: writes ONNX's own operator schemas (from Debian's libonnx) as a C++ table,
// so the importer checks a node's inputs, outputs and attributes against the exact schema of its
// op and opset without linking libonnx (the iostune binary carries no ONNX or protobuf shared
// library). Every default-domain op at every version libonnx knows is written.
//
//   iostune_onnx_schema_table OUT.cpp
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using Schema = ONNX_NAMESPACE::OpSchema;

// One letter per formal parameter: 'r' required, 'o' optional, 'v' variadic.
std::string options(const std::vector<Schema::FormalParameter>& params) {
    std::string letters;
    for (const auto& p : params) {
        switch (p.GetOption()) {
            case Schema::Single: letters += 'r'; break;
            case Schema::Optional: letters += 'o'; break;
            default: letters += 'v'; break;
        }
    }
    return letters;
}

std::string entry(const Schema& s) {
    std::string text = "    {\"" + s.Name() + "\", " + std::to_string(s.SinceVersion()) + ", " +
                       std::to_string(s.min_input()) + ", " + std::to_string(s.max_input()) +
                       ", " + std::to_string(s.min_output()) + ", " +
                       std::to_string(s.max_output()) + ", \"" + options(s.inputs()) + "\", \"" +
                       options(s.outputs()) + "\", {";
    for (const auto& [name, attribute] : s.attributes())
        text += "{\"" + name + "\", " + std::to_string(int(attribute.type)) + ", " +
                (attribute.required ? "true" : "false") + "}, ";
    return text + "}},\n";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT.cpp\n", argv[0]);
        return 2;
    }
    std::vector<Schema> schemas;
    for (const Schema& s : ONNX_NAMESPACE::OpSchemaRegistry::get_all_schemas_with_history())
        if (s.domain().empty()) schemas.push_back(s);
    std::sort(schemas.begin(), schemas.end(), [](const Schema& a, const Schema& b) {
        return a.Name() != b.Name() ? a.Name() < b.Name() : a.SinceVersion() < b.SinceVersion();
    });
    std::ofstream out(argv[1], std::ios::trunc);
    out << "// Generated at build time by iostune_onnx_schema_table from libonnx "
           "(src/onnx/schema_table); do not edit.\n"
           "#include \"src/onnx/node_schema.h\"\n\n"
           "namespace iostune::onnx_import {\n\n"
           "const std::vector<OpSchemaEntry>& onnx_schema_table() {\n"
           "    static const std::vector<OpSchemaEntry> table = {\n";
    for (const Schema& s : schemas) out << "    " << entry(s);
    out << "    };\n    return table;\n}\n\n}  // namespace iostune::onnx_import\n";
    out.close();
    if (!out) {
        std::fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[1]);
        return 1;
    }
    std::printf("iostune_onnx_schema_table: %zu default-domain schemas written to %s\n",
                schemas.size(), argv[1]);
    return 0;
}
