// Owned cuDNN descriptors (tensor, filter, convolution, activation, pooling), each created and
// set in its constructor and checked. Tensor descriptors follow a TensorView's type, layout and
// strides, so an op can read or write a channel slice of a wider tensor (concat in place, merged
// outputs).
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <string>
#include <utility>

#include "src/engine/cuda_check.h"
#include "src/engine/tensor_view.h"

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

inline cudnnDataType_t cudnn_type(DType type) {
    switch (type) {
        case DType::F16: return CUDNN_DATA_HALF;
        case DType::BF16: return CUDNN_DATA_BFLOAT16;
        default: return CUDNN_DATA_FLOAT;
    }
}

inline cudnnTensorFormat_t cudnn_format(TensorLayout layout) {
    return layout == TensorLayout::Nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

// A tensor as a TensorView describes it: type, layout and strides (a channel slice of a wider
// tensor has the wider tensor's row stride). A packed tensor is set by its format, which is how
// cuDNN's NHWC kernels recognise it.
class TensorDescriptor {
public:
    TensorDescriptor(const TensorView& v, const std::string& context) : desc_(context) {
        if (v.packed()) {
            IOSTUNE_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_.get(), cudnn_format(v.layout),
                                                           cudnn_type(v.dtype), v.n, v.c, v.h, v.w),
                                context);
            return;
        }
        const int64_t rs = v.row_stride;
        const int64_t n_stride = v.batch_stride();
        const int64_t c_stride = v.nhwc() ? 1 : int64_t(v.h) * v.w;
        const int64_t h_stride = v.nhwc() ? int64_t(v.w) * rs : v.w;
        const int64_t w_stride = v.nhwc() ? rs : 1;
        IOSTUNE_CUDNN_CHECK(cudnnSetTensor4dDescriptorEx(desc_.get(), cudnn_type(v.dtype), v.n, v.c,
                                                         v.h, v.w, int(n_stride), int(c_stride),
                                                         int(h_stride), int(w_stride)),
                            context);
    }
    // A packed [1, c, 1, 1] vector (a bias).
    TensorDescriptor(DType type, int c, const std::string& context) : desc_(context) {
        IOSTUNE_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_.get(), CUDNN_TENSOR_NCHW,
                                                       cudnn_type(type), 1, c, 1, 1),
                            context);
    }
    cudnnTensorDescriptor_t get() const { return desc_.get(); }

private:
    detail::CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                            cudnnDestroyTensorDescriptor>
        desc_;
};

// Filter [k, c, h, w] (c = input channels per group): KCRS for NCHW, KRSC for NHWC.
class FilterDescriptor {
public:
    FilterDescriptor(DType type, TensorLayout layout, int k, int c, int h, int w,
                     const std::string& context)
        : desc_(context) {
        IOSTUNE_CUDNN_CHECK(cudnnSetFilter4dDescriptor(desc_.get(), cudnn_type(type),
                                                       cudnn_format(layout), k, c, h, w),
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

// Cross-correlation (what every framework calls convolution), float accumulation in every
// precision (cuDNN's PSEUDO_HALF and PSEUDO_BFLOAT16 configurations for 16-bit data).
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
