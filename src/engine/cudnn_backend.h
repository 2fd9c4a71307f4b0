// An owned descriptor of cuDNN's graph (backend) API, with typed setters: the few calls of
// cudnn_graph.h the engine uses, without cudnn-frontend (not installable here).
#pragma once

#include <cudnn.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/engine/cuda_check.h"

namespace iostune {

class BackendDescriptor {
public:
    BackendDescriptor(cudnnBackendDescriptorType_t type, std::string context)
        : context_(std::move(context)) {
        IOSTUNE_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &descriptor_),
                            context_ + " (creating a cuDNN backend descriptor)");
    }
    ~BackendDescriptor() {
        if (descriptor_ != nullptr) cudnnBackendDestroyDescriptor(descriptor_);
    }
    BackendDescriptor(const BackendDescriptor&) = delete;
    BackendDescriptor& operator=(const BackendDescriptor&) = delete;
    BackendDescriptor(BackendDescriptor&& other) noexcept
        : descriptor_(std::exchange(other.descriptor_, nullptr)),
          context_(std::move(other.context_)) {}
    BackendDescriptor& operator=(BackendDescriptor&& other) noexcept {
        std::swap(descriptor_, other.descriptor_);
        std::swap(context_, other.context_);
        return *this;
    }

    cudnnBackendDescriptor_t get() const { return descriptor_; }

    void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
             const void* values) {
        IOSTUNE_CUDNN_CHECK(cudnnBackendSetAttribute(descriptor_, name, type, count, values),
                            fmt::format("{} (setting cuDNN backend attribute {})", context_,
                                        int(name)));
    }
    void set_int64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values) {
        set(name, CUDNN_TYPE_INT64, int64_t(values.size()), values.data());
    }
    void set_int64(cudnnBackendAttributeName_t name, int64_t value) {
        set(name, CUDNN_TYPE_INT64, 1, &value);
    }
    void set_descriptor(cudnnBackendAttributeName_t name, const BackendDescriptor& value) {
        cudnnBackendDescriptor_t d = value.get();
        set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
    }

    // Finalizing is where cuDNN says whether it supports the configuration: a status, not a throw.
    cudnnStatus_t try_finalize() { return cudnnBackendFinalize(descriptor_); }
    void finalize() {
        IOSTUNE_CUDNN_CHECK(try_finalize(), context_ + " (finalizing a cuDNN backend descriptor)");
    }

private:
    cudnnBackendDescriptor_t descriptor_ = nullptr;
    std::string context_;
};

}  // namespace iostune
