// The level graph's generator and the node's work; see level_graph.hpp.
#include "level_graph.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>

namespace taskflow_ports {

namespace {
constexpr std::size_t most_edges = 4;  // Taskflow's _edge_max
constexpr int work_steps = 32;         // sin/cos steps of a node's work
}  // namespace

void graph_node::visit() noexcept {
    visited = true;
    volatile double sink = 0.0;
    // The start value mixes the index so that nothing folds at compile time.
    const auto u = static_cast<std::uint32_t>(index);
    double x = static_cast<double>((u * 1315423911u) ^ static_cast<std::uint32_t>(index >> 3)) + 1.0;
    for (int step = 0; step < work_steps; ++step) {
        x = std::sin(x) * 1.0000001 + std::cos(x);
        sink = sink + x;
    }
}

level_graph::level_graph(std::size_t length, std::size_t levels)
    : levels_(levels), length_(length), nodes_(levels * length) {
    std::mt19937 shuffle_engine(0);
    std::srand(0);
    std::vector<int> targets(length);
    for (std::size_t level = 0; level < levels; ++level) {
        std::iota(targets.begin(), targets.end(), 0);
        std::shuffle(targets.begin(), targets.end(), shuffle_engine);
        std::size_t start = 0;
        for (std::size_t i = 0; i < length; ++i) {
            const std::size_t want = 1 + static_cast<std::size_t>(std::rand()) % most_edges;
            const bool wraps = start + want >= length;
            const std::size_t end = wraps ? length : start + want;
            (void)std::rand();  // Taskflow's "chosen" draw: never chosen (threshold 0)
            graph_node& n = at(level, i);
            n.index = static_cast<int>(i);
            n.out.assign(targets.begin() + static_cast<std::ptrdiff_t>(start),
                         targets.begin() + static_cast<std::ptrdiff_t>(end));
            if (wraps) {
                std::shuffle(targets.begin(), targets.end(), shuffle_engine);
                start = 0;
            } else {
                start = end;
            }
        }
    }
    for (std::size_t level = 0; level + 1 < levels; ++level)
        for (std::size_t i = 0; i < length; ++i) {
            const graph_node& n = at(level, i);
            for (std::size_t k = 0; k < n.out.size(); ++k)
                at(level + 1, static_cast<std::size_t>(n.out[k])).in.emplace_back(static_cast<int>(i), static_cast<int>(k));
        }
}

std::size_t level_graph::size() const noexcept {
    std::size_t total = 0;
    for (const graph_node& n : nodes_) total += 1 + n.out.size();
    return total;
}

bool level_graph::all_visited() const noexcept {
    return std::all_of(nodes_.begin(), nodes_.end(), [](const graph_node& n) { return n.visited; });
}

void level_graph::clear() noexcept {
    for (graph_node& n : nodes_) n.visited = false;
}

}  // namespace taskflow_ports
