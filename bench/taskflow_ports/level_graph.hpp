// The random layered DAG of Taskflow's graph_traversal benchmark (levelgraph.hpp there),
// generated from the same seeds in the same order so that both programs traverse the same
// graph: `levels` levels of `length` nodes, every node with 1–4 edges into the next level.
//
// Generation, per level: the next level's node indices are shuffled (std::mt19937 seeded 0,
// std::shuffle); the nodes of this level, in order, take consecutive runs of that shuffled
// list, each of 1 + rand() % 4 indices, clipped at the list's end, where the list is
// shuffled again and the next node starts from its front. Each node also draws one more
// rand() (Taskflow's "chosen" test, which is false for every node: its threshold is 0), so the
// C library's stream (srand(0)) advances as theirs does. In-edges are then recorded for
// levels 1 … levels−1 (the last level's out-edges point nowhere and are only counted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace taskflow_ports {

struct graph_node {
    int index = 0;                          // position within its level
    bool visited = false;
    std::vector<int> out;                   // indices in the next level
    std::vector<std::pair<int, int>> in;    // (parent's index, which of its out-edges)

    /// The node's work: marks it, then a short chain of sin/cos (32 steps) into a volatile
    /// sink, as Taskflow's Node::mark does for an unchosen node.
    void visit() noexcept;
};

class level_graph {
public:
    level_graph(std::size_t length, std::size_t levels);

    std::size_t levels() const noexcept { return levels_; }
    std::size_t length() const noexcept { return length_; }
    graph_node& at(std::size_t level, std::size_t index) noexcept { return nodes_[level * length_ + index]; }

    /// |V| + |E| as Taskflow's program prints it: every node and every out-edge.
    std::size_t size() const noexcept;
    /// Whether every node was visited; clear() unmarks them for the next round.
    bool all_visited() const noexcept;
    void clear() noexcept;

private:
    std::size_t levels_;
    std::size_t length_;
    std::vector<graph_node> nodes_;  // level by level
};

}  // namespace taskflow_ports
