// Owned cuDNN descriptors (tensor, filter, convolution, activation, pooling), each created and
// set in its constructor and checked. Tensor descriptors take an explicit batch stride so that
// an op can read or write a channel slice of a wider tensor (concat in place, merged outputs).
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <string>
#include <utility>

#include "src/engine/cuda_check.h"

namespace iostune {

namespace detail {

// Move-only owner of one cuDNN descriptor type.
template <class T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class CudnnDescriptor {
public:
    explicit CudnnDescriptor(const std::string& context) {
        IOSTUNE_CUDNN_CHECK(Create(&desc_), context);
    }
    ~CudnnDescriptor() {
        if (desc_ != nullptr) Destroy(desc_);
    }
    CudnnDescriptor(const CudnnDescriptor&) = delete;
    CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
    CudnnDescriptor(CudnnDescriptor&& other) noexcept : desc_(std::exchange(other.desc_, nullptr)) {}
    CudnnDescriptor& operator=(CudnnDescriptor&& other) noexcept {
        std::swap(desc_, other.desc_);
        return *this;
    }
    T get() const { return desc_; }

private:
    T desc_ = nullptr;
};

}  // namespace detail

// NCHW float tensor; `batch_stride` in elements (c*h*w when packed, wider for a channel slice).
class TensorDescriptor {
public:
    TensorDescriptor(int n, int c, int h, int w, int64_t batch_stride, const std::string& context)
        : desc_(context) {
        IOSTUNE_CUDNN_CHECK(cudnnSetTensor4dDescriptorEx(desc_.get(), CUDNN_DATA_FLOAT, n, c, h, w,
                                                         int(batch_stride), h * w, w, 1),
                            context);
    }
    cudnnTensorDescriptor_t get() const { return desc_.get(); }

private:
    detail::CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                            cudnnDestroyTensorDescriptor>
        desc_;
};

// Filter [k, c, h, w] (c = input channels per group), float, NCHW (KCRS).
class FilterDescriptor {
public:
    FilterDescriptor(int k, int c, int h, int w, const std::string& context) : desc_(context) {
        IOSTUNE_CUDNN_CHECK(
            cudnnSetFilter4dDescriptor(desc_.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c, h, w),
            context);
    }
    cudnnFilterDescriptor_t get() const { return desc_.get(); }

private:
    detail::CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                            cudnnDestroyFilterDescriptor>
        desc_;
};

struct ConvGeometry {
    int pad_h = 0, pad_w = 0;
    int stride_h = 1, stride_w = 1;
    int dilation_h = 1, dilation_w = 1;
    int groups = 1;
};

// Cross-correlation (what every framework calls convolution), float accumulation.
class ConvolutionDescriptor {
public:
    ConvolutionDescriptor(const ConvGeometry& g, cudnnMathType_t math, const std::string& context)
        : desc_(context) {
        IOSTUNE_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(desc_.get(), g.pad_h, g.pad_w, g.stride_h,
                                                            g.stride_w, g.dilation_h, g.dilation_w,
                                                            CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                            context);
        IOSTUNE_CUDNN_CHECK(cudnnSetConvolutionGroupCount(desc_.get(), g.groups), context);
        set_math(math, context);
    }
    void set_math(cudnnMathType_t math, const std::string& context) const {
        IOSTUNE_CUDNN_CHECK(cudnnSetConvolutionMathType(desc_.get(), math), context);
    }
    cudnnConvolutionDescriptor_t get() const { return desc_.get(); }

private:
    detail::CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                            cudnnDestroyConvolutionDescriptor>
        desc_;
};

class ActivationDescriptor {
public:
    ActivationDescriptor(cudnnActivationMode_t mode, const std::string& context) : desc_(context) {
        IOSTUNE_CUDNN_CHECK(
            cudnnSetActivationDescriptor(desc_.get(), mode, CUDNN_NOT_PROPAGATE_NAN, 0.0), context);
    }
    cudnnActivationDescriptor_t get() const { return desc_.get(); }

private:
    detail::CudnnDescriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor,
                            cudnnDestroyActivationDescriptor>
        desc_;
};

class PoolingDescriptor {
public:
    PoolingDescriptor(cudnnPoolingMode_t mode, int window_h, int window_w, int pad_h, int pad_w,
                      int stride_h, int stride_w, const std::string& context)
        : desc_(context) {
        IOSTUNE_CUDNN_CHECK(cudnnSetPooling2dDescriptor(desc_.get(), mode, CUDNN_NOT_PROPAGATE_NAN,
                                                        window_h, window_w, pad_h, pad_w, stride_h,
                                                        stride_w),
                            context);
    }
    cudnnPoolingDescriptor_t get() const { return desc_.get(); }

private:
    detail::CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                            cudnnDestroyPoolingDescriptor>
        desc_;
};

}  // namespace iostune
