// The structural fuzz's runner (tests/onnx/structural_fuzz.py): `iostune run --backend cpu`'s
// steps for many ONNX files in one process, each in a forked child, so a crash is still a signal
// and a hang still a timeout, without paying the CLI's start (it loads the CUDA libraries: half
// a second of CPU per run, most of the fuzz's time). The exit codes are the CLI's: 0, 1 for an
// iostune::Error or an allocation failure (one "iostune: error:" line), 3 for anything else.
// The fuzz checks a sample of cases through the real CLI and requires the same outcome.
//
//   onnx_cpu_run CASES     CASES: lines "MODEL<TAB>OUTPUT<TAB>BATCH<TAB>STDERR_FILE"
//   prints one line per case: its index and exit code, or -SIGNAL
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "src/error.h"
#include "src/fusion.h"
#include "src/host_memory.h"
#include "src/memory_needs.h"
#include "src/onnx/onnx_import.h"
#include "src/quoted.h"
#include "src/reference/reference.h"
#include "src/weights.h"

namespace {

using namespace iostune;

constexpr unsigned kTimeLimitSeconds = 60;

// What `iostune run --model MODEL --batch BATCH --backend cpu --output OUTPUT` does with an ONNX
// file (replay/model_spec.cpp's loader, cli/run_command.cpp's memory check, seeded input 1).
void run_model(const std::string& model, const std::string& output, int batch) {
    const Graph graph =
        fuse_epilogues(import_onnx_file(model, {batch, ""}).with_batch(batch)).graph;
    const MemoryNeeds needs = reference_memory_needs(graph);
    require_host_memory(needs.total(), "the weights, input and tensors of the model");
    const HostTensor input = random_input(graph.input_shape(), 1);
    std::ofstream file(output, std::ios::binary | std::ios::trunc);
    for (const HostTensor& t : reference_run_outputs(graph, {input}))
        file.write(reinterpret_cast<const char*>(t.data.data()),
                   std::streamsize(t.data.size() * sizeof(float)));
    if (!file) throw Error(fmt::format("cannot write output file '{}'", output));
}

// The child: stderr to its file, the CLI's mapping of failures to exit codes.
[[noreturn]] void child(const std::string& model, const std::string& output, int batch,
                        const std::string& stderr_file) {
    const int fd = open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, STDERR_FILENO);
    alarm(kTimeLimitSeconds);  // a hang ends as SIGALRM
    int code = 0;
    try {
        run_model(model, output, batch);
    } catch (const Error& e) {
        std::fprintf(stderr, "iostune: error: %s\n", printable(e.what()).c_str());
        code = 1;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "iostune: error: out of host memory\n");
        code = 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "iostune: internal error: %s\n", printable(e.what()).c_str());
        code = 3;
    }
    std::fflush(stderr);
    _exit(code);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CASES\n", argv[0]);
        return 2;
    }
    std::ifstream cases(argv[1]);
    std::string line;
    for (int index = 0; std::getline(cases, line); ++index) {
        std::istringstream fields(line);
        std::string model, output, batch, stderr_file;
        std::getline(fields, model, '\t');
        std::getline(fields, output, '\t');
        std::getline(fields, batch, '\t');
        std::getline(fields, stderr_file, '\t');
        std::fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("fork");
            return 2;
        }
        if (pid == 0) child(model, output, std::stoi(batch), stderr_file);
        int status = 0;
        waitpid(pid, &status, 0);
        const int result = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        std::printf("%d\t%d\n", index, result);
    }
    return 0;
}
