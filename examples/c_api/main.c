/* The C API end to end, in C:
 *   iostune_c_example DB [MODEL [COST]]        (defaults: squeezenet1_1, auto)
 * loads MODEL, shows that a bad model name is refused with a message, searches a schedule at
 * batch 1 and 4 (COST: auto measures on a GPU and falls back to the simulated cost model
 * without one), lists what DB holds, and on a GPU replays a request of 3 items on the batch-4
 * graph (1 item padded) from device buffers on a stream of its own. Without a GPU it checks
 * the refusals instead: the simulated schedules with IOSTUNE_ERROR_MISSING_SCHEDULE, the
 * sequential one with IOSTUNE_ERROR_NO_GPU. Exit status 0 when every step did what it should. */
#include <cuda_runtime_api.h>
#include <iostune/iostune.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char* what) {
    if (!ok) {
        fprintf(stderr, "FAILED: %s (%s)\n", what, iostune_last_error());
        ++failures;
    }
}

static void print_notice(const char* line, void* user_data) {
    (void)user_data;
    printf("  %s\n", line);
}

static iostune_search_result* search(iostune_model* model, const char* db, const char* cost,
                                     int batch) {
    iostune_search_options options;
    iostune_search_options_init(&options);
    options.db_path = db;
    options.cost = cost;
    options.batch = batch;
    options.progress = 0;
    options.notice = print_notice;
    iostune_search_result* result = NULL;
    const iostune_status status = iostune_search(model, &options, &result);
    expect(status == IOSTUNE_OK, "search");
    if (status != IOSTUNE_OK) return NULL;
    printf("search batch %d: schedule #%lld, %s, %.4f ms%s\n", batch,
           (long long)iostune_search_result_schedule_id(result),
           iostune_search_result_strategy(result), iostune_search_result_latency_ms(result),
           iostune_search_result_simulated(result) ? " (simulated estimate)" : " (measured)");
    return result;
}

/* A request of 3 items on the batch sizes {1, 4}: the batch-4 graph, 1 item padded. */
static void replay_padded(iostune_model* model, const char* db) {
    iostune_replay_options options;
    iostune_replay_options_init(&options);
    int sizes[] = {1, 4};
    options.db_path = db;
    options.batch_sizes = sizes;
    options.batch_size_count = 2;
    iostune_replayer* replayer = NULL;
    iostune_status status = iostune_replayer_open(model, &options, &replayer);
    if (iostune_gpu_check() != IOSTUNE_OK) {
        /* Without a GPU the searches were simulated, and estimates are never replayed; the
         * sequential schedule needs no database, only the GPU there is not. */
        expect(status == IOSTUNE_ERROR_MISSING_SCHEDULE, "estimates are not replayed");
        options.schedule_source = "sequential";
        status = iostune_replayer_open(model, &options, &replayer);
        expect(status == IOSTUNE_ERROR_NO_GPU, "replaying without a GPU is refused");
        printf("replay refused without a GPU (%s): %.70s...\n", iostune_status_name(status),
               iostune_last_error());
        return;
    }
    expect(status == IOSTUNE_OK, "opening a replayer for batch sizes 1 and 4");
    if (status != IOSTUNE_OK) return;
    size_t in_bytes = 0, out_bytes = 0;
    iostune_replayer_input_item_bytes(replayer, 0, &in_bytes);
    iostune_replayer_output_item_bytes(replayer, 0, &out_bytes);
    void* input = NULL;
    void* output = NULL;
    cudaStream_t stream = NULL;
    expect(cudaMalloc(&input, 3 * in_bytes) == cudaSuccess, "cudaMalloc of the input");
    expect(cudaMalloc(&output, 3 * out_bytes) == cudaSuccess, "cudaMalloc of the output");
    expect(cudaMemset(input, 0, 3 * in_bytes) == cudaSuccess, "cudaMemset of the input");
    expect(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
    const void* inputs[] = {input};
    void* outputs[] = {output};
    expect(iostune_replayer_run(replayer, 3, inputs, outputs, stream) == IOSTUNE_OK,
           "a request of 3 items");
    expect(cudaStreamSynchronize(stream) == cudaSuccess, "waiting for the request");
    float first = 0;
    cudaMemcpy(&first, output, sizeof first, cudaMemcpyDeviceToHost);
    printf("replayed a request of 3 items on the batch-4 graph: output[0] = %g\n", first);
    /* The same request in two halves: the outputs could be allocated between them. */
    expect(iostune_replayer_submit(replayer, 3, inputs, stream) == IOSTUNE_OK, "submitting 3 items");
    expect(iostune_replayer_collect(replayer, outputs, stream) == IOSTUNE_OK, "collecting them");
    expect(cudaStreamSynchronize(stream) == cudaSuccess, "waiting for the submitted request");
    float again = 0;
    cudaMemcpy(&again, output, sizeof again, cudaMemcpyDeviceToHost);
    expect(again == first, "submit + collect gives run's output");
    cudaStreamDestroy(stream);
    cudaFree(input);
    cudaFree(output);
    iostune_replayer_free(replayer);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DB [MODEL [COST]]\n", argv[0]);
        return 2;
    }
    const char* db = argv[1];
    const char* name = argc > 2 ? argv[2] : "squeezenet1_1";
    const char* cost = argc > 3 ? argv[3] : "auto";
    printf("iostune %s, C API %d\n", iostune_version(), iostune_api_version());

    iostune_model* bad = NULL;
    const iostune_status refused = iostune_model_load("no_such_model", 1, &bad);
    expect(refused == IOSTUNE_ERROR_BAD_INPUT && bad == NULL, "an unknown model is bad input");
    printf("bad input refused (%s): %.60s...\n", iostune_status_name(refused),
           iostune_last_error());

    iostune_model* model = NULL;
    expect(iostune_model_load(name, 1, &model) == IOSTUNE_OK, "loading the model");
    if (model == NULL) return 1;
    int in[4], out[4];
    iostune_model_input_shape(model, 0, in);
    iostune_model_output_shape(model, 0, out);
    printf("model %s (fingerprint %s): input %dx%dx%dx%d, output %dx%dx%dx%d\n",
           iostune_model_name(model), iostune_model_fingerprint(model), in[0], in[1], in[2], in[3],
           out[0], out[1], out[2], out[3]);

    iostune_search_result* one = search(model, db, cost, 1);
    iostune_search_result* four = search(model, db, cost, 4);
    char* report = NULL;
    expect(iostune_report_json(db, &report) == IOSTUNE_OK, "report");
    if (report != NULL) {
        expect(strstr(report, "\"tuned_batches\"") != NULL, "the report lists the tuned sizes");
        printf("report: %zu bytes of JSON\n", strlen(report));
        iostune_free_string(report);
    }
    replay_padded(model, db);
    iostune_search_result_free(one);
    iostune_search_result_free(four);
    iostune_model_free(model);
    printf("%s\n", failures == 0 ? "all steps passed" : "some steps FAILED");
    return failures == 0 ? 0 : 1;
}
