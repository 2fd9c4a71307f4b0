// Watts-Strogatz small-world graphs, the random wiring of RandWire ("Exploring Randomly Wired
// Neural Networks", Xie et al. 2019), generated from a seed identically on every platform.
#pragma once

#include <random>
#include <utility>
#include <vector>

namespace iostune {

// Undirected WS(n, k, p) graph as edges (u, v) with u < v, sorted. Starts from the ring lattice
// where each node links to its k/2 neighbours on either side; then, in networkx's order (for
// each distance j = 1..k/2, for each node u), the edge (u, u+j mod n) is rewired with
// probability p to a node chosen uniformly among those not u and not yet adjacent to u.
// Random numbers come from raw mt19937 output only (std::*_distribution differs between
// standard libraries), so a seed gives the same graph everywhere.
// Throws iostune::Error unless k is even, 0 < k < n, and 0 <= p <= 1.
std::vector<std::pair<int, int>> watts_strogatz(int n, int k, double p, std::mt19937& rng);

// Uniform double in [0, 1) with 53 random bits, from two raw draws.
double uniform_unit(std::mt19937& rng);
// Uniform integer in [0, count) by rejection (no modulo bias); count must be positive.
int uniform_index(std::mt19937& rng, int count);

}  // namespace iostune
