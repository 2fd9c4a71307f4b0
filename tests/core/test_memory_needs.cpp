// The memory a run needs, from the shapes (src/memory_needs.h), and the check that refuses more
// than the host has (src/host_memory.h).
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>

#include "src/error.h"
#include "src/graph.h"
#include "src/host_memory.h"
#include "src/memory_needs.h"
#include "src/weights.h"

using namespace iostune;
using Catch::Matchers::Contains;

namespace {

// x [1, 2, 4, 4] -> conv (4 channels) -> relu -> add(relu, conv) -> concat(add, conv).
Graph branchy() {
    Graph g("branchy", {1, 2, 4, 4});
    ConvAttrs conv;
    conv.out_channels = 4;
    const int c = g.add(OpKind::Conv, conv, {kGraphInput}, "conv");
    const int r = g.add(OpKind::Relu, ReluAttrs{}, {c}, "relu");
    const int a = g.add(OpKind::Add, AddAttrs{}, {r, c}, "add");
    g.add(OpKind::Concat, ConcatAttrs{}, {a, c}, "cat");
    return g;
}

}  // namespace

TEST_CASE("the CPU reference's needs follow the tensors it holds at once", "[core][memory]") {
    Graph g = branchy();
    const MemoryNeeds seeded = reference_memory_needs(g);
    CHECK(seeded.weights == (4 * 2 + 4) * 4);  // a 1x1 filter and a bias, still to be seeded
    CHECK(seeded.inputs == 32 * 4);
    // At the concat: conv (kept for it), add, and the 128-value output; relu was freed by add.
    CHECK(seeded.activations == (64 + 64 + 128) * 4);
    init_random_weights(g, 1);
    CHECK(reference_memory_needs(g).weights == 0);  // already held
    CHECK(reference_memory_needs(g.with_batch(8)).activations == 8 * seeded.activations);
}

TEST_CASE("a tensor an op reads twice is freed once", "[core][memory]") {
    // x [1, 2, 4, 4] -> r = relu -> a = add(r, r) -> b, c = relu(a) -> add(b, c, a): at the
    // last add, a, b, c and the sum are held (32 values each).
    Graph g("twice", {1, 2, 4, 4});
    const int r = g.add(OpKind::Relu, ReluAttrs{}, {kGraphInput}, "r");
    const int a = g.add(OpKind::Add, AddAttrs{}, {r, r}, "a");
    const int b = g.add(OpKind::Relu, ReluAttrs{}, {a}, "b");
    const int c = g.add(OpKind::Relu, ReluAttrs{}, {a}, "c");
    g.add(OpKind::Add, AddAttrs{}, {b, c, a}, "sum");
    CHECK(reference_memory_needs(g).activations == 4 * 32 * 4);
}

TEST_CASE("the engine's needs leave out buffers it shares", "[core][memory]") {
    const Graph g = branchy();
    const MemoryNeeds fp16 = engine_memory_needs(g, 2);
    CHECK(fp16.weights == 12 * 2);
    CHECK(fp16.inputs == 32 * 4);  // the caller's float32 input
    // conv and relu have their own buffers; add writes into the concat, which has one.
    CHECK(fp16.activations == (64 + 64 + 128) * 2);
}

TEST_CASE("more than the host has is refused in one line saying how much", "[core][memory]") {
    const HostMemoryLimit limit{int64_t(19) << 30, "available (MemAvailable + free swap)"};
    CHECK_NOTHROW(require_host_memory(int64_t(19) << 30, "x", limit));
    CHECK_THROWS_WITH(require_host_memory((int64_t(63) << 30) + (int64_t(1) << 29),
                                          "the tensors of model 'm' at batch 1", limit),
                      Contains("needs 63.5 GiB of host memory for the tensors of model 'm' at "
                               "batch 1; this machine has 19.0 GiB available (MemAvailable + "
                               "free swap)"));
    CHECK_NOTHROW(require_host_memory(int64_t(1) << 50, "x", std::nullopt));
    // This machine's own limit is read from /proc/meminfo (Linux) and is plausible.
    const auto here = host_memory_limit();
    REQUIRE(here);
    CHECK(here->bytes > (int64_t(1) << 20));
    CHECK(byte_text(812) == "812 bytes");
    CHECK(byte_text(int64_t(3) << 20) == "3.0 MiB");
    CHECK(byte_text(int64_t(5) << 40) == "5.0 TiB");
}
