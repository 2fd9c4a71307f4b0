// The engine's per-convolution choices (cuDNN algorithm, math type, fused or not), kept with a
// schedule so that a replay in another process runs exactly the kernels the search measured.
//
// Why: the engine picks each convolution's algorithm by timing the candidates on the GPU, and at
// batch 1 several candidates are within noise of each other. Two processes can then pick
// differently and the same schedule runs 20% apart (seen on the H100). Pinning the choices makes
// the search's measured latency the replay's latency.
//
// Keys are the engine's convolution signatures (shapes, strides, padding, groups, math mode);
// values use cuDNN's names, so the record is readable and survives cuDNN's enum numbering.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace iostune {

// What a convolution's timed candidates are ranked by (docs/search-log.md, "Kernels chosen for
// co-running"). Alone: its own time, one launch on an idle GPU. CoRun: among the candidates at
// most kCoRunSlack slower alone than the fastest, the one whose two copies launched at once on
// two streams finish first: a kernel that fills every SM alone (large tiles, split-K) makes a
// concurrent branch wait, one that leaves room lets it run beside.
enum class ConvObjective { Alone, CoRun };
inline constexpr double kCoRunSlack = 0.25;
const char* to_string(ConvObjective objective);                     // "alone", "corun"
ConvObjective conv_objective_from_string(const std::string& name);  // throws iostune::Error

struct ConvChoice {
    // e.g. "IMPLICIT_PRECOMP_GEMM" (cudnnConvolutionFwdAlgo_t without prefix),
    // "DEPTHWISE_NHWC" (the engine's own channels-last depthwise kernel; "DEPTHWISE_NHWC_NARROW"
    // with narrower packs, more threads, on small maps; "DEPTHWISE_NHWC_TILED" staged in shared
    // memory, square 3/5/7 filters of stride 1 or 2), "GEMM_<rank>" (a 1x1
    // convolution as cuBLASLt's rank-th heuristic matrix product) or "GRAPH_<rank>" (the rank-th
    // usable engine configuration of cuDNN's graph API heuristics)
    std::string algorithm;
    std::string math;       // "DEFAULT_MATH", "TENSOR_OP_MATH", "FMA_MATH"
    std::string path;       // "fused", "conv+epilogue", "conv", "depthwise", "gemm", "graph"
                            // or "graph+epilogue" (conv_step.h's ConvPath)
    double time_ms = 0;     // the chosen variant's measured time per launch (for reports)
    // What it was chosen for. A search keeps choices of both kinds apart (stored_conv_choices);
    // a replay pins whichever its schedule was measured with.
    ConvObjective objective = ConvObjective::Alone;
    // Chosen in a hurry (EngineOptions::time_convolutions_by): from a few cheap candidates, not
    // all. A replay pins it like any choice; a later search times the convolution again (the
    // store's quick choices are not pinned: tuning_job.cpp, stored_conv_choices).
    bool quick = false;
    // A graph-API choice's configuration by what it is ("engine 51 setting 2", "engine 67 on 66
    // SMs"): pinned, it selects that configuration whatever its rank in this process's
    // shortlist (ranks move when cuDNN's heuristics or the shortlist's limits change), and a
    // shortlist without it times the convolution afresh. Empty (choices stored before
    // 2026-11-29, other paths): the rank in `algorithm` alone names it.
    std::string engine = "";

    bool operator==(const ConvChoice&) const = default;
};

// Convolution signature -> choice.
using ConvChoices = std::map<std::string, ConvChoice>;

// The same kernel: algorithm, math and path (not what it was chosen for, nor its time).
bool same_kernel(const ConvChoice& a, const ConvChoice& b);

// Of the variants one convolution's timing ran (`ran`, each with its time alone), the next
// fastest kernels after `chosen`, fastest first: at most `most`, each a kernel of its own and at
// most kCoRunSlack slower alone than the fastest. A search's kernel moves try them where the
// schedule runs them (tuning/kernel_moves.h): alone, near-ties swap places beside a branch.
// kRunnersUp: how many the moves try by default; an engine keeps up to kMostRunnersUp, so that a
// search may try more (`search --kernel-runners-up`).
inline constexpr size_t kRunnersUp = 2;
inline constexpr size_t kMostRunnersUp = 6;
std::vector<ConvChoice> runners_up(const std::vector<ConvChoice>& ran, const ConvChoice& chosen,
                                   size_t most = kRunnersUp);

// {"<signature>": {"algorithm": ..., "math": ..., "path": ..., "time_ms": ...}, ...}; a choice
// made for co-running also has "objective": "corun" (none: "alone", as before it existed), a
// quick one "quick": true.
nlohmann::json conv_choices_to_json(const ConvChoices& choices);
// Throws iostune::Error naming `where` (e.g. "schedule #12") and the bad entry for an unknown
// algorithm, math type or path, or a malformed document.
ConvChoices conv_choices_from_json(const nlohmann::json& json, const std::string& where);

// The choices made for `objective`.
ConvChoices conv_choices_for(const ConvChoices& choices, ConvObjective objective);
// The choices not made in a hurry (ConvChoice::quick).
ConvChoices timed_in_full(const ConvChoices& choices);
// The choices of several schedules run by one engine (a model set's members back to back, each
// with the choices stored with its schedule): each signature's choice from the first part that
// has one. `differing` (when given) gets how many of the later parts' choices name another kernel
// than the one kept: one engine runs one kernel per signature, so those run the first part's.
ConvChoices combined_choices(const std::vector<ConvChoices>& parts, int* differing = nullptr);

// The algorithm names of the "gemm" path: this prefix, then the rank in cuBLASLt's shortlist.
inline constexpr const char* kGemmAlgorithmPrefix = "GEMM_";
// The rank a "GEMM_<rank>" name holds, or -1 for any other name.
int gemm_algorithm_rank(const std::string& name);
// The algorithm names of the "graph" and "graph+epilogue" paths: this prefix, then the rank in
// the usable heuristic engine configurations of that graph (graph_conv.h).
inline constexpr const char* kGraphAlgorithmPrefix = "GRAPH_";
// The rank a "GRAPH_<rank>" name holds, or -1 for any other name.
int graph_algorithm_rank(const std::string& name);

// The names conv_choices_from_json accepts.
bool is_conv_algorithm_name(const std::string& name);
bool is_conv_math_name(const std::string& name);
bool is_conv_path_name(const std::string& name);

}  // namespace iostune
