// [gpu] Replay at any batch size (iostune/batch_replayer.h) on the GPU: a request of 3 items on
// the batch-4 graph gives each item the output the full batch-4 run gives it, with the padding
// zero-filled; a request of 9 on sizes {1, 4} runs in chunks 4 + 4 + 1 with each chunk's
// outputs; native 16-bit I/O moves 2-byte items; the request timing counts its items;
// submit() and collect() are run() in two halves; the sizes share one arena and one copy of
// the weights, and requests alternating between them keep their bits. The
// sequential schedule stands in for a stored one (no database): padding is the replay's
// business, not the schedule's.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "iostune/batch_replayer.h"
#include "replay/model_spec.h"
#include "search/baselines.h"
#include "src/engine/cuda_check.h"
#include "src/engine/device_buffer.h"
#include "src/engine/engine.h"
#include "src/output_agreement.h"
#include "src/precision.h"
#include "src/weights.h"

using namespace iostune;

namespace {

constexpr const char* kModel = "squeezenet1_1";

ReplayOptions sequential(const std::string& precision, bool native_io = false) {
    ReplayOptions options;
    options.schedule_source = "sequential";
    options.precision = precision;
    options.native_io = native_io;
    return options;
}

// `bytes` of host data on the device, and back.
DeviceBuffer upload(const void* host, size_t bytes) {
    DeviceBuffer buffer(bytes);
    IOSTUNE_CUDA_CHECK(cudaMemcpy(buffer.get(), host, bytes, cudaMemcpyHostToDevice), "upload");
    return buffer;
}
template <class T>
std::vector<T> download(const DeviceBuffer& buffer) {
    std::vector<T> host(buffer.bytes() / sizeof(T));
    IOSTUNE_CUDA_CHECK(cudaMemcpy(host.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost),
                       "download");
    return host;
}

// A request of `n` float items (the first n of `input`) through `replayer`: its float outputs.
std::vector<float> request(BatchReplayer& replayer, const HostTensor& input, int n) {
    const size_t in_bytes = replayer.input_item_bytes() * size_t(n);
    const DeviceBuffer in = upload(input.data.data(), in_bytes);
    DeviceBuffer out(replayer.output_item_bytes() * size_t(n));
    replayer.run(in.get(), out.get(), n, nullptr);
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "waiting for the request");
    return download<float>(out);
}

// How `got`, a request's outputs for the first items of `input`, agrees with the sequential
// schedule's outputs of the whole batch `input` (the items past `got` left out).
OutputAgreement agreement_with_sequential(const std::string& model, const std::string& precision,
                                          const HostTensor& input, const std::vector<float>& got) {
    EngineOptions engine_options;
    engine_options.precision = precision_from_string(precision);
    Engine reference(load_model_spec(model, input.shape.n), engine_options);
    reference.set_input(input);
    reference.launch_schedule(sequential_schedule(reference.graph()), reference.origin_stream());
    HostTensor expected = reference.read_output();
    HostTensor actual = expected;
    std::copy(got.begin(), got.end(), actual.data.begin());
    std::fill(expected.data.begin() + long(got.size()), expected.data.end(), 0.0f);
    std::fill(actual.data.begin() + long(got.size()), actual.data.end(), 0.0f);
    return output_agreement(actual, expected, precision_from_string(precision));
}

std::vector<float> items(const std::vector<float>& all, size_t item, int first, int count) {
    return {all.begin() + long(item * size_t(first)), all.begin() + long(item * size_t(first + count))};
}

}  // namespace

TEST_CASE("a padded request gives each item the full batch's output", "[gpu][replay][batch]") {
    const std::string precision = GENERATE(as<std::string>{}, "tf32", "fp16");
    CAPTURE(precision);
    BatchReplayer replayer(kModel, {1, 4}, sequential(precision));
    REQUIRE(replayer.plan(3).size() == 1);
    CHECK(replayer.plan(3).front().tuned == 4);
    const size_t out_item = replayer.output_item_bytes() / sizeof(float);
    const HostTensor four = random_input(load_model_spec(kModel, 4).input_shape(), 21);

    // Item 3 of the full run is data; the padded request must not see it.
    const std::vector<float> full = request(replayer, four, 4);
    const std::vector<float> padded = request(replayer, four, 3);
    REQUIRE(padded.size() == 3 * out_item);
    // The same graph on the same items: the same kernels, so the same bits.
    CHECK(padded == items(full, out_item, 0, 3));
    // The padding was zero-filled, not left with the previous request's item.
    Replayer& graph4 = replayer.replayer(4);
    const size_t in_item = replayer.input_item_bytes() / sizeof(float);
    std::vector<float> pad(in_item, 1.0f);
    IOSTUNE_CUDA_CHECK(cudaMemcpy(pad.data(), graph4.input_buffer() + 3 * in_item,
                                  in_item * sizeof(float), cudaMemcpyDeviceToHost),
                       "reading the padding");
    CHECK(std::all_of(pad.begin(), pad.end(), [](float v) { return v == 0.0f; }));

    // And each item's output is the sequential schedule's, within the precision's rounding.
    const OutputAgreement agreement = agreement_with_sequential(kModel, precision, four, padded);
    CAPTURE(agreement.max_abs_diff, agreement.tolerance);
    CHECK(agreement.agrees());
}

TEST_CASE("a request above the largest tuned size runs in chunks", "[gpu][replay][batch]") {
    BatchReplayer replayer(kModel, {1, 4}, sequential("tf32"));
    const std::vector<BatchChunk> chunks = replayer.plan(9);
    REQUIRE(chunks.size() == 3);
    CHECK(chunks[2].tuned == 1);
    const size_t out_item = replayer.output_item_bytes() / sizeof(float);
    const size_t in_item = replayer.input_item_bytes() / sizeof(float);
    const HostTensor nine = random_input(load_model_spec(kModel, 9).input_shape(), 33);
    const std::vector<float> all = request(replayer, nine, 9);
    REQUIRE(all.size() == 9 * out_item);
    // Each chunk as a request of its own on the same graphs.
    for (const BatchChunk& c : chunks) {
        CAPTURE(c.tuned, c.offset, c.count);
        HostTensor part(Shape{c.count, nine.shape.c, nine.shape.h, nine.shape.w});
        std::copy_n(nine.data.begin() + long(in_item * size_t(c.offset)), part.data.size(),
                    part.data.begin());
        CHECK(request(replayer, part, c.count) == items(all, out_item, c.offset, c.count));
    }
}

TEST_CASE("native 16-bit I/O moves 2-byte items, padded like float ones",
          "[gpu][replay][batch]") {
    BatchReplayer replayer(kModel, {4}, sequential("fp16", true));
    const Shape shape = load_model_spec(kModel, 4).input_shape();
    CHECK(replayer.input_item_bytes() == size_t(shape.c * shape.h * shape.w) * 2);
    const HostTensor four = random_input(shape, 5);
    std::vector<__half> halves(four.data.size());
    std::transform(four.data.begin(), four.data.end(), halves.begin(),
                   [](float v) { return __float2half(v); });
    const DeviceBuffer in = upload(halves.data(), halves.size() * sizeof(__half));
    DeviceBuffer full(replayer.output_item_bytes() * 4), padded(replayer.output_item_bytes() * 3);
    replayer.run(in.get(), full.get(), 4, nullptr);
    replayer.run(in.get(), padded.get(), 3, nullptr);
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "waiting for the requests");
    const std::vector<unsigned short> a = download<unsigned short>(full);
    const std::vector<unsigned short> b = download<unsigned short>(padded);
    REQUIRE(b.size() * 4 == a.size() * 3);
    CHECK(std::equal(b.begin(), b.end(), a.begin()));
}

TEST_CASE("request timing counts the request's items", "[gpu][replay][batch]") {
    BatchReplayer replayer(kModel, {1, 4}, sequential("tf32"));
    const ReplayTiming t = replayer.benchmark(3, 20, nullptr, 2);
    CHECK(t.iterations == 20);
    CHECK(t.latency_ms.size() == 20);
    CHECK(t.median_ms > 0);
    CHECK(t.throughput_per_s == Approx(3 * 1000.0 / t.median_ms));
    const ReplayTiming graph = replayer.benchmark_graph(4, 20, nullptr, 2);
    CHECK(graph.median_ms > 0);
    CHECK_THROWS_WITH(replayer.benchmark_graph(3, 20, nullptr, 2),
                      Catch::Contains("not one of the tuned sizes [1, 4]"));
}

TEST_CASE("submit and collect give run's outputs, each request reading its own input",
          "[gpu][replay][batch]") {
    BatchReplayer replayer(kModel, {1, 4}, sequential("tf32"));
    const HostTensor a = random_input(load_model_spec(kModel, 4).input_shape(), 41);
    const HostTensor b = random_input(load_model_spec(kModel, 4).input_shape(), 42);
    const std::vector<float> want_a3 = request(replayer, a, 3);
    const std::vector<float> want_b4 = request(replayer, b, 4);
    REQUIRE(want_a3 != items(want_b4, replayer.output_item_bytes() / sizeof(float), 0, 3));

    // Both requests enqueued back to back: the graph's copy node is pointed at b's buffer while
    // a's launch may still be queued, which must keep reading a.
    const DeviceBuffer in_a = upload(a.data.data(), replayer.input_item_bytes() * 3);
    const DeviceBuffer in_b = upload(b.data.data(), replayer.input_item_bytes() * 4);
    DeviceBuffer out_a(replayer.output_item_bytes() * 3), out_b(replayer.output_item_bytes() * 4);
    const void* ia[] = {in_a.get()};
    const void* ib[] = {in_b.get()};
    void* oa[] = {out_a.get()};
    void* ob[] = {out_b.get()};
    replayer.submit(ia, 3, nullptr);
    replayer.collect(oa, nullptr);
    replayer.submit(ib, 4, nullptr);
    replayer.collect(ob, nullptr);
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "waiting for the requests");
    CHECK(download<float>(out_a) == want_a3);
    CHECK(download<float>(out_b) == want_b4);

    CHECK_THROWS_WITH(replayer.collect(oa, nullptr), Catch::Contains("without a submitted request"));
    CHECK_THROWS_WITH(replayer.submit(ia, 9, nullptr), Catch::Contains("use run(), which splits"));
    replayer.submit(ia, 3, nullptr);
    replayer.run(in_a.get(), out_a.get(), 3, nullptr);  // drops the submitted request
    CHECK_THROWS_WITH(replayer.collect(oa, nullptr), Catch::Contains("without a submitted request"));
}

TEST_CASE("the tuned sizes share one arena and one copy of the weights, and keep their bits",
          "[gpu][replay][batch][memory]") {
    const std::string precision = GENERATE(as<std::string>{}, "tf32", "fp16");
    CAPTURE(precision);
    // A concurrent schedule (greedy on lanes, dataflow) for every size: it names ops, not sizes.
    const std::string model = "googlenet";
    ReplayOptions options;
    options.precision = precision;
    options.schedule_source = "given";
    options.schedule_name = "greedy";
    options.schedule_json =
        schedule_to_json(with_form(make_baseline("greedy", load_model_spec(model, 1)),
                                   ScheduleForm::Dataflow))
            .dump();
    BatchReplayer replayer(model, {1, 4}, options);
    const ReplayInfo one = replayer.replayer(1).info();
    const ReplayInfo four = replayer.replayer(4).info();
    CHECK(one.shared_weight_bytes == 0);  // the first size uploads them
    CHECK(four.shared_weight_bytes > 0);
    CHECK(four.shared_weight_bytes <= one.weight_bytes);
    CHECK(one.shared_arena_bytes > 0);
    CHECK(four.shared_arena_bytes == one.shared_arena_bytes);
    const BatchMemory m = replayer.memory();
    CHECK(m.shared_arena_bytes == one.shared_arena_bytes);
    CHECK(m.device_memory_bytes == one.device_memory_bytes + four.device_memory_bytes -
                                       four.shared_weight_bytes - four.shared_arena_bytes);
    CHECK(m.device_memory_bytes < one.device_memory_bytes + four.device_memory_bytes);

    // Requests alternating between the sizes: each graph writes before it reads whatever the
    // other left in the arena, so each gives the bits it gave first.
    const HostTensor x = random_input(load_model_spec(model, 4).input_shape(), 51);
    const std::vector<float> first4 = request(replayer, x, 4);
    const std::vector<float> first1 = request(replayer, x, 1);
    const std::vector<float> first3 =
        items(first4, replayer.output_item_bytes() / sizeof(float), 0, 3);
    for (int round = 0; round < 3; ++round) {
        CAPTURE(round);
        CHECK(request(replayer, x, 4) == first4);
        CHECK(request(replayer, x, 1) == first1);
        CHECK(request(replayer, x, 3) == first3);
    }
    // And the batch-4 graph computes the model: the sequential schedule's output, within the
    // precision's rounding.
    const OutputAgreement agreement = agreement_with_sequential(model, precision, x, first4);
    CAPTURE(agreement.max_abs_diff, agreement.tolerance);
    CHECK(agreement.agrees());
}
