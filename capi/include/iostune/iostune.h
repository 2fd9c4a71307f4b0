/* iostune C API: tune a CNN for this GPU and replay its schedule as CUDA Graphs, from C or any
 * language with a C foreign-function interface (the Python package `iostune` is ctypes over it).
 *
 *   iostune_model* model;
 *   iostune_model_load("inception_v3", 1, &model);            zoo name, .json or .onnx file
 *   iostune_search_options so;  iostune_search_options_init(&so);
 *   so.precision = "fp16";  so.db_path = "iostune.db";
 *   iostune_search_result* found;
 *   iostune_search(model, &so, &found);                        measured on this GPU, stored
 *   iostune_replay_options ro;  iostune_replay_options_init(&ro);
 *   int sizes[] = {1, 4, 16};
 *   ro.precision = "fp16";  ro.batch_sizes = sizes;  ro.batch_size_count = 3;
 *   iostune_replayer* replayer;
 *   iostune_replayer_open(model, &ro, &replayer);             one CUDA Graph per size
 *   iostune_replayer_run(replayer, 3, &d_in, &d_out, stream); 3 items on the batch-4 graph
 *
 * Conventions. Every function that can fail returns an iostune_status; on failure
 * iostune_last_error() holds one line saying what failed and what to do (the message the
 * `iostune` command prints), until the next failing call on the same thread. Handles are opaque;
 * each has a _free function that accepts NULL. Strings returned through `char**` are the
 * caller's, freed with iostune_free_string(); `const char*` getters point into their handle and
 * live as long as it. Option structs start with `struct_size` and are set to their defaults by
 * their _init function, so a program built against an older header keeps working. No C++ type,
 * CUDA type or exception crosses this interface: a CUDA stream is passed as `void*`
 * (a cudaStream_t / CUstream; NULL is the legacy default stream), device buffers as `void*`.
 *
 * Threads: calls on different handles may run on different threads; one handle is used by one
 * thread at a time. A replayer owns one set of device buffers: runs on different streams must
 * be ordered by the caller (or use one replayer per stream).
 */
#ifndef IOSTUNE_IOSTUNE_H
#define IOSTUNE_IOSTUNE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define IOSTUNE_API __attribute__((visibility("default")))
#else
#define IOSTUNE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function or struct of this header changes incompatibly. */
#define IOSTUNE_API_VERSION 1

typedef enum iostune_status {
    IOSTUNE_OK = 0,
    /* A file, the schedule database, CUDA or memory failed; the message says which. */
    IOSTUNE_ERROR = 1,
    /* A model, option or argument the caller gave: unknown, malformed or out of range. */
    IOSTUNE_ERROR_BAD_INPUT = 2,
    /* No stored schedule may run for this model, batch size, precision and GPU (none was
     * searched, it was searched on another GPU, or only simulated estimates exist). */
    IOSTUNE_ERROR_MISSING_SCHEDULE = 3,
    /* This needs an NVIDIA GPU and the machine has none usable. */
    IOSTUNE_ERROR_NO_GPU = 4,
    /* A bug in iostune. */
    IOSTUNE_ERROR_INTERNAL = 5
} iostune_status;

IOSTUNE_API int iostune_api_version(void); /* IOSTUNE_API_VERSION of the library */
/* "0.1.0 (commit abc1234, Release build)" */
IOSTUNE_API const char* iostune_version(void);
/* The last failure's message on this thread ("" when none). */
IOSTUNE_API const char* iostune_last_error(void);
/* "IOSTUNE_ERROR_BAD_INPUT", ... */
IOSTUNE_API const char* iostune_status_name(iostune_status status);
IOSTUNE_API void iostune_free_string(char* text);
/* IOSTUNE_OK when a CUDA device can be used, else IOSTUNE_ERROR_NO_GPU saying why. */
IOSTUNE_API iostune_status iostune_gpu_check(void);
/* 1 when this build has the optional feature `name`, else 0. Features: "time_budget" (the
 * search honours iostune_search_options.time_budget_s). */
IOSTUNE_API int iostune_has_feature(const char* name);

/* ---- models ---------------------------------------------------------------------------- */

typedef struct iostune_model iostune_model;

/* `spec`: a zoo model name (`iostune models`), an iostune model file (.json) or an ONNX file
 * (.onnx, imported with its weights), at `batch`. The file must stay in place while replayers
 * are opened from the model. */
IOSTUNE_API iostune_status iostune_model_load(const char* spec, int batch, iostune_model** model);
IOSTUNE_API void iostune_model_free(iostune_model* model);
IOSTUNE_API const char* iostune_model_name(const iostune_model* model);
/* The structural fingerprint schedules are stored under (the same at every batch size). */
IOSTUNE_API const char* iostune_model_fingerprint(const iostune_model* model);
IOSTUNE_API int iostune_model_batch(const iostune_model* model);
IOSTUNE_API int iostune_model_input_count(const iostune_model* model);
IOSTUNE_API int iostune_model_output_count(const iostune_model* model);
/* N, C, H, W of input or output `index` at the model's batch size. */
IOSTUNE_API iostune_status iostune_model_input_shape(const iostune_model* model, int index,
                                                     int dims[4]);
IOSTUNE_API iostune_status iostune_model_output_shape(const iostune_model* model, int index,
                                                      int dims[4]);

/* ---- search: the offline tuning job (`iostune search`) ------------------------------------ */

/* Receives each line the user should see while a search runs (which cost model, fallbacks). */
typedef void (*iostune_notice_fn)(const char* line, void* user_data);

typedef struct iostune_search_options {
    size_t struct_size;     /* sizeof(iostune_search_options) */
    int batch;              /* 0: the model's batch size */
    const char* precision;  /* "fp32", "tf32" (default), "fp16", "bf16" */
    const char* cost;       /* "auto" (default: measured on a GPU, else simulated), "measured",
                               "sim" */
    const char* db_path;    /* "iostune.db"; created if missing */
    const char* strategy;   /* "ios-both" (default), "ios-parallel", "ios-merge" */
    int r;                  /* pruning: at most r ops per group (3) */
    int s;                  /* pruning: at most s groups per stage (8) */
    int no_prune;           /* nonzero: search every schedule (r and s unused) */
    const char* layout;     /* "auto" (default), "nchw", "nhwc" */
    const char* contenders; /* baselines timed beside the search: "greedy,nimble" (default),
                               any of greedy, nimble, opara comma-separated, or "none" */
    const char* sim_device; /* device profile of the simulated cost model: "h100" */
    /* Seconds the search may take; 0: no limit. Passed to the search where this build's search
     * has a time budget; otherwise ignored with a notice saying so. */
    double time_budget_s;
    int progress;            /* nonzero (default): progress bar on stderr when it is a terminal */
    iostune_notice_fn notice; /* NULL: notices go to stderr */
    void* notice_user_data;
    /* Every schedule the search times and stores keeps its activation arena within this many
     * times the sequential order's liveness bound (e.g. 1.3; docs/memory.md); 0 (default): no
     * limit. */
    double memory_limit;
} iostune_search_options;

IOSTUNE_API void iostune_search_options_init(iostune_search_options* options);

typedef struct iostune_search_result iostune_search_result;

/* Searches, validates and stores a schedule for `model` (see `iostune search`). */
IOSTUNE_API iostune_status iostune_search(const iostune_model* model,
                                          const iostune_search_options* options,
                                          iostune_search_result** result);
IOSTUNE_API void iostune_search_result_free(iostune_search_result* result);
/* The stored schedule replay will run: the search's own, or a baseline that measured faster. */
IOSTUNE_API int64_t iostune_search_result_schedule_id(const iostune_search_result* result);
/* That schedule's latency: measured end to end, or the simulated estimate (see _simulated). */
IOSTUNE_API double iostune_search_result_latency_ms(const iostune_search_result* result);
/* That schedule's strategy ("ios-both", "nimble", ...). */
IOSTUNE_API const char* iostune_search_result_strategy(const iostune_search_result* result);
/* 1 when every latency is an estimate of the simulated cost model. */
IOSTUNE_API int iostune_search_result_simulated(const iostune_search_result* result);
/* Everything, as `iostune search --format json` prints it. */
IOSTUNE_API const char* iostune_search_result_json(const iostune_search_result* result);

/* ---- the schedule database ---------------------------------------------------------------- */

/* Every stored key's best schedule, as `iostune report --format json` prints it (a JSON array;
 * each row also lists the batch sizes tuned for its model, device and precision). */
IOSTUNE_API iostune_status iostune_report_json(const char* db_path, char** json);
/* The stored schedule a replay of `model` at `batch` and `precision` would run on CUDA device
 * `device`, as a JSON object (schedule_id, strategy, layout, measured_ms, ...), without building
 * anything. IOSTUNE_ERROR_MISSING_SCHEDULE when there is none; needs the GPU to compare with. */
IOSTUNE_API iostune_status iostune_schedule_lookup(const iostune_model* model, const char* db_path,
                                                   int batch, const char* precision, int device,
                                                   char** json);

/* ---- replay: stored schedules as CUDA Graphs, at any batch size --------------------------- */

typedef struct iostune_replay_options {
    size_t struct_size;      /* sizeof(iostune_replay_options) */
    const char* db_path;     /* "iostune.db"; must exist; only read */
    const char* precision;   /* the schedules' precision: "tf32" (default), ... */
    /* The tuned batch sizes, one CUDA Graph each; a request of n items runs on the smallest
     * >= n (padded, output trimmed), above the largest in chunks. NULL: the model's batch. */
    const int* batch_sizes;
    int batch_size_count;
    /* 0 (default): inputs and outputs are float32 NCHW, converted inside the graph.
     * 1: the engine's own storage and layout (iostune_replayer_info_json: "storage", "layout";
     * fp16/bf16 channels-last for 16-bit schedules), no conversion. */
    int native_io;
    int fallback_sequential; /* nonzero: run the sequential schedule when none is stored */
    int device;              /* CUDA device ordinal (0) */
    int64_t schedule_id;     /* 0: the best stored; else exactly this one (one batch size) */
    const char* schedule_source; /* "db" (default) or "sequential" (no database needed) */
} iostune_replay_options;

IOSTUNE_API void iostune_replay_options_init(iostune_replay_options* options);

typedef struct iostune_replayer iostune_replayer;

IOSTUNE_API iostune_status iostune_replayer_open(const iostune_model* model,
                                                 const iostune_replay_options* options,
                                                 iostune_replayer** replayer);
IOSTUNE_API void iostune_replayer_free(iostune_replayer* replayer);
IOSTUNE_API int iostune_replayer_input_count(const iostune_replayer* replayer);
IOSTUNE_API int iostune_replayer_output_count(const iostune_replayer* replayer);
/* Bytes of one batch item of input / output `index` (float32 NCHW, or the native storage). */
IOSTUNE_API iostune_status iostune_replayer_input_item_bytes(const iostune_replayer* replayer,
                                                             int index, size_t* bytes);
IOSTUNE_API iostune_status iostune_replayer_output_item_bytes(const iostune_replayer* replayer,
                                                              int index, size_t* bytes);
/* What was loaded, as JSON: model, precision, layout, storage, native_io, batch_sizes, each
 * input's and output's item shape, and per tuned size its schedule (id, strategy, stages, ...). */
IOSTUNE_API iostune_status iostune_replayer_info_json(const iostune_replayer* replayer,
                                                      char** json);
/* A request of `n` items: inputs[k] (device memory) holds n items of input k, outputs[k]
 * receives n items of output k. Enqueued on `stream`, returns without waiting; no host copy,
 * no allocation. */
IOSTUNE_API iostune_status iostune_replayer_run(iostune_replayer* replayer, int n,
                                                const void* const* inputs, void* const* outputs,
                                                void* stream);
/* iostune_replayer_run in two halves, for a caller that allocates its outputs while the GPU
 * runs (the Python package does): submit enqueues a request of n <= the largest tuned size
 * (inputs copied in by the graph, the graph launched); collect enqueues the copies of its
 * outputs on `stream` (the request's, or one ordered after it). A run or a second submit drops a
 * request not yet collected; collect without one is IOSTUNE_ERROR_BAD_INPUT. */
IOSTUNE_API iostune_status iostune_replayer_submit(iostune_replayer* replayer, int n,
                                                   const void* const* inputs, void* stream);
IOSTUNE_API iostune_status iostune_replayer_collect(iostune_replayer* replayer,
                                                    void* const* outputs, void* stream);
/* Times `iterations` requests of `n` items on `stream` after `warmup` (as `iostune replay`:
 * each alone between CUDA events), on buffers of its own; graph_only: the tuned graph of batch
 * `n` alone, without the copies in and out (what `iostune replay` times). JSON: median_ms,
 * mean_ms, min_ms, max_ms, p90_ms, p95_ms, p99_ms, stddev_ms, enqueue_median_ms,
 * throughput_per_s, iterations, samples_ms. */
IOSTUNE_API iostune_status iostune_replayer_benchmark(iostune_replayer* replayer, int n,
                                                      int iterations, int warmup, int graph_only,
                                                      void* stream, char** json);

#ifdef __cplusplus
}
#endif

#endif /* IOSTUNE_IOSTUNE_H */
