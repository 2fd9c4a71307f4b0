// [gpu] A captured graph's kernels run in the order they were enqueued, past a kernel launched
// with programmatic dependent launch (src/engine/graph_edges.h). Kernel A lets its dependents
// start at once and reads x after 2 ms; B, a PDL secondary after it, writes x before it waits
// for A. As captured, B's write lands while A still runs (the race); made full, A reads x as it
// was.
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include "src/engine/cuda_graph.h"
#include "src/engine/cuda_stream.h"
#include "src/engine/device_buffer.h"
#include "src/engine/graph_edges.h"
#include "src/engine/stream_capture.h"
#include "tests/gpu/pdl_kernels.h"

using namespace iostune;
using namespace iostune::test;

namespace {

constexpr uint64_t kReadAfterNs = 2'000'000;
constexpr int kBefore = 1, kWritten = 7;

void enqueue_a_b(int* x, int* read_by_a, cudaStream_t stream) {
    launch_early_trigger_then_copy(x, read_by_a, kReadAfterNs, stream);
    launch_programmatic_write(x, kWritten, stream);
}

CudaGraph capture_as_is(int* x, int* read_by_a, cudaStream_t stream) {
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    enqueue_a_b(x, read_by_a, stream);
    cudaGraph_t raw = nullptr;
    REQUIRE(cudaStreamEndCapture(stream, &raw) == cudaSuccess);
    return CudaGraph(raw);
}

// Of `runs` launches of the graph, those where A read B's write.
int overlapped_runs(const CudaGraph& graph, int* x, int* read_by_a, cudaStream_t stream,
                    int runs) {
    const CudaGraphExec exec(graph);
    int overlapped = 0;
    for (int r = 0; r < runs; ++r) {
        REQUIRE(cudaMemsetAsync(read_by_a, 0, sizeof(int), stream) == cudaSuccess);
        REQUIRE(cudaMemcpyAsync(x, &kBefore, sizeof(int), cudaMemcpyHostToDevice, stream) ==
                cudaSuccess);
        exec.launch(stream);
        int host = -1;
        REQUIRE(cudaMemcpyAsync(&host, read_by_a, sizeof(int), cudaMemcpyDeviceToHost, stream) ==
                cudaSuccess);
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        CHECK((host == kBefore || host == kWritten));
        if (host == kWritten) ++overlapped;
    }
    return overlapped;
}

}  // namespace

TEST_CASE("a kernel launched with PDL does not run beside the kernel before it in a graph",
          "[gpu][graph_edges]") {
    const CudaStream stream;
    const DeviceBuffer buffer(2 * sizeof(int));
    int* x = static_cast<int*>(buffer.get());
    int* read_by_a = x + 1;
    const int runs = 5;

    SECTION("as captured, B's write lands while A runs (so the check can see the race)") {
        int device = 0, major = 0;
        REQUIRE(cudaGetDevice(&device) == cudaSuccess);
        REQUIRE(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
                cudaSuccess);
        if (major < 9) {
            WARN("programmatic dependent launch needs compute capability 9.0: no race to see");
            return;
        }
        const CudaGraph graph = capture_as_is(x, read_by_a, stream.get());
        CHECK(overlapped_runs(graph, x, read_by_a, stream.get(), runs) > 0);
    }
    SECTION("its programmatic edge made full, B waits for A") {
        const CudaGraph graph = capture_as_is(x, read_by_a, stream.get());
        const EdgeCounts counts = make_programmatic_edges_full(graph.get(), "a test graph");
        CHECK(counts.edges == 1);
        CHECK(counts.programmatic == 1);
        CHECK(make_programmatic_edges_full(graph.get(), "again").programmatic == 0);
        CHECK(overlapped_runs(graph, x, read_by_a, stream.get(), runs) == 0);
    }
    SECTION("record_graph, as every iostune graph is made, makes it full") {
        const CudaGraph graph = record_graph(
            stream.get(), [&](cudaStream_t s) { enqueue_a_b(x, read_by_a, s); }, "a test graph");
        CHECK(make_programmatic_edges_full(graph.get(), "again").programmatic == 0);
        CHECK(overlapped_runs(graph, x, read_by_a, stream.get(), runs) == 0);
    }
}
