// [gpu] A captured graph's order stays transitive past a kernel launched with programmatic
// dependent launch (src/engine/graph_edges.h): kernel A lets its dependents start at once and
// writes a flag after 2 ms; B, a PDL secondary that does not wait for A, ends at once; C, after B
// on the stream, copies the flag. As captured, C can overtake A (the race); settled, C sees A's
// write.
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

constexpr uint64_t kWriteAfterNs = 2'000'000;

void enqueue_a_b_c(int* flag, int* seen, cudaStream_t stream) {
    launch_early_trigger_then_write(flag, kWriteAfterNs, stream);
    launch_programmatic_noop(stream);
    launch_copy_flag(flag, seen, stream);
}

CudaGraph capture_unsettled(int* flag, int* seen, cudaStream_t stream) {
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    enqueue_a_b_c(flag, seen, stream);
    cudaGraph_t raw = nullptr;
    REQUIRE(cudaStreamEndCapture(stream, &raw) == cudaSuccess);
    return CudaGraph(raw);
}

// Of `runs` launches of the graph, those where C saw the flag unset.
int overtaken_runs(const CudaGraph& graph, int* flag, int* seen, cudaStream_t stream, int runs) {
    const CudaGraphExec exec(graph);
    int overtaken = 0;
    for (int r = 0; r < runs; ++r) {
        REQUIRE(cudaMemsetAsync(flag, 0, sizeof(int), stream) == cudaSuccess);
        REQUIRE(cudaMemsetAsync(seen, 0, sizeof(int), stream) == cudaSuccess);
        exec.launch(stream);
        int host = -1;
        REQUIRE(cudaMemcpyAsync(&host, seen, sizeof(int), cudaMemcpyDeviceToHost, stream) ==
                cudaSuccess);
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        if (host == 0) ++overtaken;
    }
    return overtaken;
}

}  // namespace

TEST_CASE("a programmatic launch cannot let later nodes of a graph overtake the kernel before it",
          "[gpu][graph_edges]") {
    const CudaStream stream;
    const DeviceBuffer buffer(2 * sizeof(int));
    int* flag = static_cast<int*>(buffer.get());
    int* seen = flag + 1;
    const int runs = 5;

    SECTION("as captured, the race is there (so the check can see it)") {
        const CudaGraph graph = capture_unsettled(flag, seen, stream.get());
        const EdgeCounts counts =
            settle_programmatic_edges(graph.get(), ProgrammaticEdges::captured, "a test graph");
        CHECK(counts.edges == 2);
        CHECK(counts.programmatic == 1);
        CHECK(overtaken_runs(graph, flag, seen, stream.get(), runs) > 0);
    }
    SECTION("full dependencies") {
        const CudaGraph graph = capture_unsettled(flag, seen, stream.get());
        const EdgeCounts counts =
            settle_programmatic_edges(graph.get(), ProgrammaticEdges::full, "a test graph");
        CHECK(counts.programmatic == 1);
        CHECK(settle_programmatic_edges(graph.get(), ProgrammaticEdges::captured, "again")
                  .programmatic == 0);
        CHECK(overtaken_runs(graph, flag, seen, stream.get(), runs) == 0);
    }
    SECTION("the programmatic edge kept, the order made transitive") {
        const CudaGraph graph = capture_unsettled(flag, seen, stream.get());
        const EdgeCounts counts =
            settle_programmatic_edges(graph.get(), ProgrammaticEdges::transitive, "a test graph");
        CHECK(counts.programmatic == 1);
        CHECK(counts.added == 1);
        CHECK(overtaken_runs(graph, flag, seen, stream.get(), runs) == 0);
    }
    SECTION("record_graph, as every iostune graph is made, settles them") {
        const CudaGraph graph = record_graph(
            stream.get(), [&](cudaStream_t s) { enqueue_a_b_c(flag, seen, s); }, "a test graph");
        CHECK(settle_programmatic_edges(graph.get(), ProgrammaticEdges::captured, "again")
                  .programmatic == 0);
        CHECK(overtaken_runs(graph, flag, seen, stream.get(), runs) == 0);
    }
}
