// binary_tree (taskflow/benchmarks/binary_tree): a complete binary tree of tasks numbered
// 1 … 2^L − 1 (node i's children are 2i and 2i+1); a node runs after its parent, and its
// work is one relaxed increment of a shared counter. The timed interval builds the graph
// and runs it, as in Taskflow's program. The sweep is L = 1 … -l; a row's size is 2^L.
//
// Variants: `then` (default) makes every node a continuation of its parent's shared future
// (the root an aloe::async), built in index order by the calling thread, as Taskflow and
// TBB build their graphs before running them; `group` unfolds the tree at run time, each
// node spawning its children into one aloe::task_group (no graph is built: the dependencies
// are the spawns).
#include "ports.hpp"

#include <aloe/task.hpp>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

namespace taskflow_ports {
namespace {

void tree_then(std::size_t nodes, std::atomic<std::size_t>& counter) {
    auto bump = [&counter] { counter.fetch_add(1, std::memory_order_relaxed); };
    auto bump_after = [&counter](const aloe::shared_future<void>&) {
        counter.fetch_add(1, std::memory_order_relaxed);
    };
    std::vector<aloe::shared_future<void>> node(nodes);
    node[1] = aloe::async(bump).share();
    for (std::size_t i = 2; i < nodes; ++i) node[i] = node[i / 2].then(bump_after).share();
    // The leaves finish last along every path: waiting for them waits for the tree.
    for (std::size_t i = nodes / 2; i < nodes; ++i) node[i].wait();
}

struct tree_node_task {
    std::size_t index;
    std::size_t nodes;
    std::atomic<std::size_t>* counter;
    aloe::task_group* group;
    void operator()() const {
        counter->fetch_add(1, std::memory_order_relaxed);
        const std::size_t left = 2 * index;
        if (left + 1 < nodes) {
            group->run(tree_node_task{left, nodes, counter, group});
            group->run(tree_node_task{left + 1, nodes, counter, group});
        }
    }
};

void tree_group(std::size_t nodes, std::atomic<std::size_t>& counter) {
    aloe::task_group group;
    group.run(tree_node_task{1, nodes, &counter, &group});
    group.wait();
}

}  // namespace

void run_binary_tree(const options& o) {
    const std::string variant = o.variant.empty() ? "then" : o.variant;
    void (*tree)(std::size_t, std::atomic<std::size_t>&) = nullptr;
    if (variant == "then") tree = tree_then;
    else if (variant == "group") tree = tree_group;
    else bad_choice("binary_tree", "variant", variant, "then, group");

    print_header();
    for (unsigned layers = 1; layers <= o.num_layers; ++layers) {
        const std::size_t nodes = std::size_t{1} << layers;  // indices 1 … nodes-1 are tasks
        double total_us = 0;
        for (unsigned round = 0; round < o.num_rounds; ++round) {
            std::atomic<std::size_t> counter{0};
            total_us += static_cast<double>(time_us([&] { tree(nodes, counter); }).count());
            if (counter.load() + 1 != nodes)
                fail("binary_tree", std::to_string(counter.load()) + " tasks ran, expected " +
                                        std::to_string(nodes - 1));
        }
        print_row(nodes, total_us, o.num_rounds);
    }
}

}  // namespace taskflow_ports
