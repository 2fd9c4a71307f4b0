// A convolution through cuDNN's graph (backend) API: a one-operation graph y = conv(x, w) on the
// op's own views, run by one of the engine configurations cuDNN's heuristics rank for it.
//
// Why: the legacy cudnnConvolutionForward reaches only the engines its eight algorithm enums map
// to. PyTorch builds convolutions through the graph API and so gets engines the legacy call does
// not: on the H100, TF32 channels-last convolutions ran there as one sm90 implicit GEMM where the
// legacy call wrapped an sm80 kernel in layout-conversion kernels (inception_v3's 3x1 on 8x8x384,
// batch 16: 32.0 us against 15.6), and fp16 depthwise 7x7 convolutions run cuDNN's specialised
// channels-last kernel. Tensor strides are explicit in the graph API, so channel slices of a
// concat or of a merged output can be read and written in place (the planner also times the
// staged alternative: some engines convert layouts around a strided view).
//
// The engine times the shortlist (one configuration per engine, then a few further knob settings
// of those engines) beside its other candidates as
// ConvChoice "GRAPH_<rank>": path "graph" is the convolution alone, bias, ReLU and a residual
// following as the engine's epilogue kernels (as for the legacy "conv+epilogue" path); path
// "graph+epilogue" is one graph y = act(conv(x, w) + bias + z), the activation a ReLU or a fused
// Activation op that cuDNN has a pointwise mode for (SiLU, sigmoid, tanh, GELU, clip/ReLU6,
// leaky ReLU; not hard-sigmoid or hard-swish), which cuDNN's runtime-fusion engines compile into
// one kernel (on the RandWire stem at batch 16 the separate bias/ReLU kernel took 79 of 210 us,
// TF32, H100).
//
// A transposed convolution (ConvTranspose) is the same graph's backward-data operation,
// GraphConvDirection::BackwardData: the op's input is dy, its output dx, and the filter that of
// the forward convolution from dx to dy. The legacy cudnnConvolutionBackwardData ran U-Net's
// 2x2 stride-2 upsampling as seven kernels at 1% of the roofline (288 us of 765, fp16 b16, H100).
//
// Finalized shortlists are shared by every GraphConv of the process with the same descriptors
// (shapes, strides, types, alignments, geometry, precision, workspace limit): an execution plan
// holds no data pointers, and finalizing is the costly part (run-time compiled engines compile
// a kernel there). Without sharing, each of timm's nasnetalarge's 488 convolutions finalized
// its own plans: its sequential replay took 60 s of CPU on the H100 before its first launch
// (9.6 s with sharing), and `replay --validate`, which builds two engines, 117 s (11.8 s).
#pragma once

#include <cudnn.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/engine/cudnn_backend.h"
#include "src/engine/tensor_view.h"
#include "src/graph.h"
#include "src/precision.h"

namespace iostune {

struct ConvGeometry;

// What the graph computes after the convolution: y = act(conv + bias + z), act the ReLU or the
// activation (never both); empty: y = conv.
struct GraphEpilogue {
    const void* bias = nullptr;  // out.c elements of the output's type, or none
    std::optional<TensorView> residual = std::nullopt;  // z, added before the ReLU
    bool relu = false;
    std::optional<ActivationAttrs> activation = std::nullopt;
};

// Forward: y = conv(x, w), x the op's input. BackwardData: the op's output is dx of the forward
// convolution from it to the op's input (a transposed convolution); no epilogue.
enum class GraphConvDirection { Forward, BackwardData };

class GraphConv {
public:
    static constexpr int kCandidates = 6;
    // Of those, run-time compiled ones (NVRTC, the runtime-fusion engines of a fused epilogue):
    // all by default; IOSTUNE_GRAPH_COMPILED=n (1-6) finalizes at most n. Compiling is nearly
    // all of choosing a fused convolution, but a cap of 2 chose kernels that ran 1-4% slower in
    // the searches' schedules (docs/search-log.md, "Fewer engines compiled").
    static constexpr int kCompiledCandidates = kCandidates;
    // Further knob settings of the shortlisted engines, timed beside them (graph_conv.cpp).
    static constexpr int kKnobVariants = 3;

    // `weight`: the filter in the views' element type and layout (KCRS for NCHW, KRSC for
    // channels-last), out.c x (in.c / groups) x kernel_h x kernel_w. Takes the process's
    // shortlist for these descriptors, or builds the operation graph and finalizes up to
    // kCandidates of cuDNN's heuristic engine configurations (distinct engines), then up to
    // kKnobVariants further settings of those engines, that fit `max_workspace` and keep
    // the precision's arithmetic (no tensor cores in strict fp32, no down-conversion of fp32
    // inputs, run-time compiled kernels only for grouped convolutions); throws iostune::Error
    // when cuDNN rejects the graph itself, or has no pointwise mode for the epilogue's
    // activation. With an epilogue the graph fuses it (and run-time compiled engines are
    // allowed: the runtime-fusion engines are). BackwardData: `weight` is the transposed
    // convolution's [in.c, out.c / groups, kernel_h, kernel_w] in the views' type and layout (the
    // forward filter from `out` to `in`), and `epilogue` must be empty.
    GraphConv(const TensorView& in, const TensorView& out, const void* weight, int kernel_h,
              int kernel_w, const ConvGeometry& geometry, const GraphEpilogue& epilogue,
              Precision precision, size_t max_workspace, const std::string& context,
              GraphConvDirection direction = GraphConvDirection::Forward);

    int candidates() const;
    // Runs shortlist entry `rank` from now on; false when there is no such entry.
    bool select(int rank);
    size_t workspace_bytes() const;
    // The SMs the selected configuration is carved to (IOSTUNE_SM_CARVEOUT), 0: not carved.
    int sm_target() const;
    // The selected entry by what it is, as identity() names it ("engine -1" when cuDNN did not
    // say its engine): for plans.
    std::string selected_name() const;
    // Shortlist entry `rank` by what it is ("engine 51", "engine 51 setting 2", "engine 67 on
    // 66 SMs"; "" when cuDNN did not say its engine), and the rank of such a name here (-1: not
    // in this shortlist). ConvChoice::engine.
    std::string identity(int rank) const;
    int rank_of(const std::string& identity) const;
    // "TENSOR_OP_MATH" when shortlist entry `rank` runs on tensor cores, else "FMA_MATH": the
    // ConvChoice's math, so a stored choice names what it computes with.
    const char* math(int rank) const;
    // What the heuristics offered and why some were left out, for OpPlan::candidates.
    const std::string& notes() const;
    // Enqueues the convolution on `handle`'s stream (capture-safe).
    void run(cudnnHandle_t handle, void* workspace) const;
    // A forward convolution on other views of the same shapes, strides and alignments (another
    // memory plan's places): only the addresses change; `residual` replaces z when the graph
    // has one.
    void rebind(const TensorView& in, const TensorView& out, const TensorView* residual);

    // The finalized plans for one set of descriptors and what the heuristics left out.
    struct Shortlist;

private:
    std::shared_ptr<const Shortlist> shortlist_;
    int selected_ = 0;
    // The tensors of the forward convolution x -> y: the op's input and output, or (backward
    // data) its output and input.
    void* x_ = nullptr;
    const void* w_;
    void* y_ = nullptr;
    const void* bias_;
    const void* z_;
    std::string context_;
};

}  // namespace iostune
