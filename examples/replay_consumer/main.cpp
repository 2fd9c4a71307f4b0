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
        // Every output (a detector backbone with an FPN has one per level; most models one).
        std::vector<std::vector<float>> outputs;
        std::vector<float*> output_ptrs;
        for (int k = 0; k < replayer.output_count(); ++k)
            outputs.emplace_back(replayer.output_elements(k));
        for (std::vector<float>& output : outputs) output_ptrs.push_back(output.data());
        replayer.run_host({input.data()}, output_ptrs, stream);
        const iostune::ReplayTiming timing = replayer.benchmark(100, stream);
        cudaStreamDestroy(stream);

        const iostune::ReplayInfo& info = replayer.info();
        std::printf("%s batch %d: schedule #%lld (%s), %d stages, median %.4f ms\n",
                    info.model.c_str(), info.batch, static_cast<long long>(info.schedule_id),
                    info.strategy.c_str(), info.stages, timing.median_ms);
        for (size_t k = 0; k < outputs.size(); ++k)
            std::printf("output %zu (%s) [0..3] = %g %g %g\n", k, info.output_names[k].c_str(),
                        outputs[k][0], outputs[k][1], outputs[k][2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "replay_consumer: %s\n", e.what());
        return 1;
    }
    return 0;
}
