// The epilogue fusion pass: rewrites a graph so that each op is what the engine runs as one
// step, before search and replay see it (the DP then schedules, and the fingerprint keys, the
// fused graph). First an op without parameters that computes what an earlier op computes (the
// same kind, attributes and inputs; not a graph output, not across a model set's members) is
// dropped, its readers reading the earlier op. Then a conv, separable conv or add whose every
// reader applies a ReLU to it first (a Relu op, or a SepConv's pre-ReLU), a separable conv among
// them, applies the ReLU itself: the Relu op goes, the SepConvs read it as it is (NASNet's second
// separable convolution of each branch, RandWire's nodes after their sums). Then chains, where
// each producer's only consumer is the next op and the producer is not a graph output:
//   Conv -> Relu            => Conv with relu
//   SepConv -> Relu         => SepConv with post_relu
//   Conv -> Activation      => Conv with that activation (ConvAttrs::activation), applied last
//   Conv -> PRelu           => Conv with prelu (its slopes the conv's last parameter), applied last
//   Add -> Relu             => Add with relu
//   Concat -> Relu          => Concat of its inputs each with the ReLU applied by its producer
//                              (a conv or an add only the concat reads), or none needed (it is
//                              a ReLU's output), or, for at most one input, by a Relu op of its own
//   Conv -> Add(conv, z)    => Conv with residual, inputs [x, z]: relu?(conv(x) + bias + z),
//                              placed where the Add was (so z is computed before it), when z
//                              is estimated ready no later than x plus the add's time: else the
//                              convolution would wait for z, a parallel branch it used to run
//                              beside (an HRNet fuse layer's sum), and the add stays an op
//   Add -> Add              => one Add over the inner Add's inputs and the outer's others
// Weights move with their op; graph outputs, cells and a model set's members (their op ranges,
// outputs and fingerprints) follow the rewrite. docs/fusion.md describes it for users.
#pragma once

#include "src/graph.h"

namespace iostune {

// Whether a loaded model is rewritten by fuse_epilogues() (replay/model_spec.h).
enum class Fusion { Epilogues, None };

struct FusionCounts {
    int duplicates = 0;       // ops that computed what an earlier op computes, dropped
    int conv_relu = 0;        // ReLUs fused into the convolution before them
    int conv_activation = 0;  // other activations fused into the convolution before them
    int conv_prelu = 0;       // PReLUs fused into the convolution before them
    int add_relu = 0;         // ReLUs fused into the add before them
    int sepconv_relu = 0;     // ReLUs fused into the separable convolution before them
    // Separable convolutions whose input is now rectified by its producer, which read it as it
    // is (their pre-ReLU dropped; no op removed).
    int pre_relu_dropped = 0;
    int conv_add = 0;         // adds fused into a convolution as its residual
    int add_add = 0;          // adds merged into the add after them
    int relu_concat = 0;      // ReLUs of a concatenation applied by its inputs' producers
    // ReLUs of a concatenation applied likewise but on one input, which kept a ReLU op of its own
    // (an op moved, none removed).
    int relu_concat_slice = 0;
    int fused() const {  // ops fused into another
        return conv_relu + conv_activation + conv_prelu + add_relu + sepconv_relu + conv_add +
               add_add + relu_concat;
    }
    int total() const { return duplicates + fused(); }  // ops removed
    bool changed() const { return total() + relu_concat_slice + pre_relu_dropped > 0; }
    // Conv -> Add chains left as they are: z came later than the add could start (not removed).
    int add_of_branches = 0;
};

struct FusedGraph {
    Graph graph;
    FusionCounts counts;
};

// The graph with every fusable chain above rewritten; the outputs are the same tensors (the
// fused ops compute their parts in order; an n-ary Add may sum in another order).
FusedGraph fuse_epilogues(const Graph& graph);

}  // namespace iostune
