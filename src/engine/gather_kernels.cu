// Kernels that read each output element from one computed input position, nothing else: strided
// slices (YOLO's Focus stem), depth_to_space / space_to_depth (PixelShuffle, PixelUnshuffle) and
// flatten. One thread per output element in the output's storage order, so neighbouring threads
// write neighbouring elements in either layout; reads follow the op's mapping. See op_kernels.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <cstdint>

#include "src/engine/kernel_support.cuh"
#include "src/engine/op_kernels.h"

namespace iostune {
namespace {

using namespace kernel_support;

// Where output (c, y, x) reads from: channel, row and column of the input (the image is the same).
struct Source {
    int c = 0, y = 0, x = 0;
};

struct SliceSource {
    SliceGeometry g;
    __device__ __forceinline__ Source operator()(int c, int y, int x) const {
        return {g.c_begin + c * g.c_step, g.h_begin + y * g.h_step, g.w_begin + x * g.w_step};
    }
};

// The channel holding block offset (by, bx) of channel c, `channels` counting the channels of the
// side without blocks (graph.h's BlockOrder).
__device__ __forceinline__ int block_channel(ChannelBlockOrder order, int block, int channels,
                                             int c, int by, int bx) {
    return order == ChannelBlockOrder::Dcr ? (by * block + bx) * channels + c
                                           : (c * block + by) * block + bx;
}

struct DepthToSpaceSource {
    int block = 1, out_channels = 1;
    ChannelBlockOrder order = ChannelBlockOrder::Dcr;
    __device__ __forceinline__ Source operator()(int c, int y, int x) const {
        const int by = y % block, bx = x % block;
        return {block_channel(order, block, out_channels, c, by, bx), y / block, x / block};
    }
};

struct SpaceToDepthSource {
    int block = 1, in_channels = 1;
    ChannelBlockOrder order = ChannelBlockOrder::Dcr;
    __device__ __forceinline__ Source operator()(int oc, int y, int x) const {
        int c = 0, offset = 0;  // offset = by * block + bx
        if (order == ChannelBlockOrder::Dcr) {
            offset = oc / in_channels;
            c = oc - offset * in_channels;
        } else {
            c = oc / (block * block);
            offset = oc - c * block * block;
        }
        return {c, y * block + offset / block, x * block + offset % block};
    }
};

struct FlattenSource {
    int h = 1, w = 1;  // the input's
    __device__ __forceinline__ Source operator()(int feature, int, int) const {
        const int plane = h * w;
        const int c = feature / plane, p = feature - c * plane;
        return {c, p / w, p % w};
    }
};

template <class T, class Map>
__global__ void gather_kernel(const T* in, Indexer in_ix, T* out, Indexer out_ix, int64_t total,
                              Map map) {
    IOSTUNE_GRID_LOOP(i, total) {
        int64_t n = 0;
        int c = 0, y = 0, x = 0;
        out_ix.coordinates(i, n, c, y, x);
        const Source s = map(c, y, x);
        out[out_ix.at(n, c, y, x)] = in[in_ix.at(n, s.c, s.y, s.x)];
    }
}

template <class Map>
void launch_gather(const TensorView& in, const TensorView& out, const Map& map, const char* what,
                   cudaStream_t stream) {
    require_same_storage(in, out, what);
    if (in.n != out.n)
        throw Error(fmt::format("{}: input batch {} and output batch {} differ", what, in.n,
                                out.n));
    const int64_t total = out.elements();
    if (total == 0) return;
    dispatch(out.dtype, [&](auto t) {
        using T = decltype(t);
        gather_kernel<T, Map><<<blocks_for(total), kThreads, 0, stream>>>(
            static_cast<const T*>(in.data), indexer_of(in), static_cast<T*>(out.data),
            indexer_of(out), total, map);
    });
    check_launch(what);
}

std::string extent(const TensorView& v) { return fmt::format("{}x{}x{}x{}", v.n, v.c, v.h, v.w); }

}  // namespace

void launch_strided_slice(const TensorView& in, const TensorView& out, const SliceGeometry& g,
                          cudaStream_t stream) {
    // The first and last index read along each axis must lie inside the input.
    const auto inside = [](int begin, int step, int count, int size) {
        const int64_t last = int64_t(begin) + int64_t(count - 1) * step;
        return count > 0 && begin >= 0 && begin < size && last >= 0 && last < size;
    };
    if (!inside(g.c_begin, g.c_step, out.c, in.c) || !inside(g.h_begin, g.h_step, out.h, in.h) ||
        !inside(g.w_begin, g.w_step, out.w, in.w))
        throw Error(fmt::format("strided slice: output {} from ({}, {}, {}) in steps of ({}, {}, "
                                "{}) reads outside the input {}",
                                extent(out), g.c_begin, g.h_begin, g.w_begin, g.c_step, g.h_step,
                                g.w_step, extent(in)));
    launch_gather(in, out, SliceSource{g}, "strided slice", stream);
}

void launch_depth_to_space(const TensorView& in, const TensorView& out, int block,
                           ChannelBlockOrder order, cudaStream_t stream) {
    if (block < 1 || int64_t(out.c) * block * block != in.c || int64_t(in.h) * block != out.h ||
        int64_t(in.w) * block != out.w)
        throw Error(fmt::format("depth to space: input {} with block {} is not the output {}",
                                extent(in), block, extent(out)));
    launch_gather(in, out, DepthToSpaceSource{block, out.c, order}, "depth to space", stream);
}

void launch_space_to_depth(const TensorView& in, const TensorView& out, int block,
                           ChannelBlockOrder order, cudaStream_t stream) {
    if (block < 1 || int64_t(in.c) * block * block != out.c || int64_t(out.h) * block != in.h ||
        int64_t(out.w) * block != in.w)
        throw Error(fmt::format("space to depth: input {} with block {} is not the output {}",
                                extent(in), block, extent(out)));
    launch_gather(in, out, SpaceToDepthSource{block, in.c, order}, "space to depth", stream);
}

void launch_flatten(const TensorView& in, const TensorView& out, cudaStream_t stream) {
    if (int64_t(in.c) * in.h * in.w != out.c || out.h != 1 || out.w != 1)
        throw Error(fmt::format("flatten: input {} does not flatten to the output {}", extent(in),
                                extent(out)));
    launch_gather(in, out, FlattenSource{in.h, in.w}, "flatten", stream);
}

}  // namespace iostune
