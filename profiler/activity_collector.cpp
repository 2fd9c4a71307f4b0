#include "profiler/activity_collector.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "profiler/cupti_check.h"

namespace iostune {

namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kBufferAlign = 8;

// CUPTI delivers records through process-wide C callbacks, so what they collect lives here.
struct Recorded {
    std::mutex mutex;
    ActivityTrace trace;
    std::unordered_map<uint32_t, int64_t> op_of_correlation;
    bool collector_alive = false;
};

Recorded& recorded() {
    static Recorded instance;
    return instance;
}

const char* memcpy_kind_name(uint8_t kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
        default: return "memcpy";
    }
}

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;
}

// The record structs are pinned to the CUPTI headers we build against (CUDA 13.0).
void store(const CUpti_Activity* record, ActivityTrace& trace,
           std::unordered_map<uint32_t, int64_t>& op_of_correlation) {
    switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
            KernelRecord r;
            r.name = k->name ? k->name : "?";
            r.start_ns = k->start;
            r.end_ns = k->end;
            r.grid_x = k->gridX, r.grid_y = k->gridY, r.grid_z = k->gridZ;
            r.block_x = k->blockX, r.block_y = k->blockY, r.block_z = k->blockZ;
            r.registers_per_thread = k->registersPerThread;
            r.static_shared_bytes = k->staticSharedMemory;
            r.dynamic_shared_bytes = k->dynamicSharedMemory;
            r.stream_id = k->streamId;
            r.correlation_id = k->correlationId;
            r.graph_node_id = k->graphNodeId;
            trace.kernels.push_back(std::move(r));
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
            TransferRecord r;
            r.kind = TransferKind::Memcpy;
            r.what = memcpy_kind_name(m->copyKind);
            r.bytes = m->bytes;
            r.start_ns = m->start;
            r.end_ns = m->end;
            r.stream_id = m->streamId;
            r.correlation_id = m->correlationId;
            trace.transfers.push_back(std::move(r));
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
            TransferRecord r;
            r.kind = TransferKind::Memset;
            r.what = "memset";
            r.bytes = m->bytes;
            r.start_ns = m->start;
            r.end_ns = m->end;
            r.stream_id = m->streamId;
            r.correlation_id = m->correlationId;
            trace.transfers.push_back(std::move(r));
            break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
            if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
                op_of_correlation[e->correlationId] = int64_t(e->externalId);
            break;
        }
        default: break;
    }
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    Recorded& rec = recorded();
    {
        std::lock_guard lock(rec.mutex);
        CUpti_Activity* record = nullptr;
        while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
            store(record, rec.trace, rec.op_of_correlation);
    }
    std::free(buffer);
}

// External correlation records are only emitted alongside runtime/driver API records, so those
// are enabled too (and then dropped in store()); cuDNN launches through the driver API.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

}  // namespace

ActivityCollector::ActivityCollector() {
    Recorded& rec = recorded();
    {
        std::lock_guard lock(rec.mutex);
        if (rec.collector_alive)
            throw Error("profiler: only one CUPTI activity collector may run at a time");
        rec.collector_alive = true;
        rec.trace = {};
        rec.op_of_correlation.clear();
    }
    try {
        IOSTUNE_CUPTI_CHECK(cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed),
                            "profiler: registering activity buffers");
        for (CUpti_ActivityKind kind : kKinds)
            IOSTUNE_CUPTI_CHECK(cuptiActivityEnable(kind), "profiler: enabling activity records");
    } catch (...) {
        for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
        std::lock_guard lock(rec.mutex);
        rec.collector_alive = false;
        throw;
    }
    active_ = true;
}

ActivityCollector::~ActivityCollector() {
    if (!active_) return;
    cudaDeviceSynchronize();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
    Recorded& rec = recorded();
    std::lock_guard lock(rec.mutex);
    rec.collector_alive = false;
}

ActivityTrace ActivityCollector::collect() {
    const cudaError_t sync = cudaDeviceSynchronize();
    if (sync != cudaSuccess)
        throw Error(fmt::format("profiler: cudaDeviceSynchronize before collecting records: {}",
                                cudaGetErrorString(sync)));
    IOSTUNE_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                        "profiler: flushing activity buffers");
    Recorded& rec = recorded();
    std::lock_guard lock(rec.mutex);
    ActivityTrace out = std::move(rec.trace);
    rec.trace = {};
    auto attribute = [&](auto& records) {
        for (auto& r : records)
            if (auto it = rec.op_of_correlation.find(r.correlation_id);
                it != rec.op_of_correlation.end())
                r.op_id = it->second;
    };
    attribute(out.kernels);
    attribute(out.transfers);
    rec.op_of_correlation.clear();
    return out;
}

OpScope::OpScope(int64_t op_id) {
    IOSTUNE_CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(
                            CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, uint64_t(op_id)),
                        fmt::format("profiler: marking op {}", op_id));
}

OpScope::~OpScope() {
    uint64_t popped = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped);
}

}  // namespace iostune
