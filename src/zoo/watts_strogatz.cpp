#include "src/zoo/watts_strogatz.h"

#include <fmt/format.h>

#include <cstdint>

#include "src/error.h"

namespace iostune {

double uniform_unit(std::mt19937& rng) {
    const uint64_t high = rng() >> 5;  // 27 bits
    const uint64_t low = rng() >> 6;   // 26 bits
    return double((high << 26) | low) / double(uint64_t(1) << 53);
}

int uniform_index(std::mt19937& rng, int count) {
    if (count <= 0) throw Error(fmt::format("uniform_index: count must be positive, got {}", count));
    const uint64_t range = uint64_t(1) << 32;
    // Largest multiple of count that fits in 32 bits: draws at or above it would bias the result.
    const uint64_t limit = range - range % uint64_t(count);
    uint64_t draw = rng();
    while (draw >= limit) draw = rng();
    return int(draw % uint64_t(count));
}

std::vector<std::pair<int, int>> watts_strogatz(int n, int k, double p, std::mt19937& rng) {
    if (k <= 0 || k >= n || k % 2 != 0 || !(p >= 0.0 && p <= 1.0))
        throw Error(fmt::format("Watts-Strogatz graph WS(n={}, k={}, p={}): need an even k with "
                                "0 < k < n and 0 <= p <= 1",
                                n, k, p));
    std::vector<std::vector<bool>> adjacent(size_t(n), std::vector<bool>(size_t(n), false));
    auto link = [&](int a, int b, bool on) { adjacent[size_t(a)][size_t(b)] = adjacent[size_t(b)][size_t(a)] = on; };
    for (int j = 1; j <= k / 2; ++j)
        for (int u = 0; u < n; ++u) link(u, (u + j) % n, true);

    std::vector<int> candidates;
    for (int j = 1; j <= k / 2; ++j) {
        for (int u = 0; u < n; ++u) {
            if (uniform_unit(rng) >= p) continue;
            candidates.clear();
            for (int w = 0; w < n; ++w)
                if (w != u && !adjacent[size_t(u)][size_t(w)]) candidates.push_back(w);
            if (candidates.empty()) continue;  // u already links to every node: nothing to rewire to
            const int target = candidates[size_t(uniform_index(rng, int(candidates.size())))];
            link(u, (u + j) % n, false);
            link(u, target, true);
        }
    }

    std::vector<std::pair<int, int>> edges;
    for (int u = 0; u < n; ++u)
        for (int v = u + 1; v < n; ++v)
            if (adjacent[size_t(u)][size_t(v)]) edges.emplace_back(u, v);
    return edges;
}

}  // namespace iostune
