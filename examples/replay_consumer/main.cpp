// Replays a model tuned with `iostune search`, using only the public replay API:
//   replay_consumer DB MODEL [BATCH]
// and prints the first outputs and the median latency of 100 graph launches.
#include <iostune/replay.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s DB MODEL [BATCH]\n", argv[0]);
        return 2;
    }
    try {
        iostune::ReplayOptions options;
        options.db_path = argv[1];
        options.batch = argc > 3 ? std::atoi(argv[3]) : 1;
        iostune::Replayer replayer(argv[2], options);

        cudaStream_t stream = nullptr;
        if (cudaStreamCreate(&stream) != cudaSuccess) {
            std::fprintf(stderr, "cannot create a CUDA stream\n");
            return 1;
        }
        std::vector<float> input(replayer.input_elements(), 0.5f);
        std::vector<float> output(replayer.output_elements());
        replayer.run_host(input.data(), output.data(), stream);
        const iostune::ReplayTiming timing = replayer.benchmark(100, stream);
        cudaStreamDestroy(stream);

        const iostune::ReplayInfo& info = replayer.info();
        std::printf("%s batch %d: schedule #%lld (%s), %d stages, median %.4f ms\n",
                    info.model.c_str(), info.batch, static_cast<long long>(info.schedule_id),
                    info.strategy.c_str(), info.stages, timing.median_ms);
        std::printf("output[0..3] = %g %g %g\n", output[0], output[1], output[2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "replay_consumer: %s\n", e.what());
        return 1;
    }
    return 0;
}
