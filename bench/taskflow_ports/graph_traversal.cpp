// graph_traversal (taskflow/benchmarks/graph_traversal): one task per node of a random
// layered DAG (level_graph.hpp); a node runs after all its parents, and its work is
// graph_node::visit (a short sin/cos chain). The graph is generated untimed; the timed
// interval builds the task graph and runs it. The sweep is a graph of i levels × i nodes
// for i = 1, 2, 4, … 2048; a row's size is |V| + |E|.
//
// Variants: `dataflow` (default) makes each node of level ≥ 1 an aloe::dataflow of the
// vector of its parents' shared futures (level 0: aloe::async), keeping two levels of
// futures alive; `group` keeps a count of unfinished parents per node and runs a node on a
// task_group when its count reaches zero.
#include "level_graph.hpp"
#include "ports.hpp"

#include <aloe/task.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace taskflow_ports {
namespace {

void traverse_dataflow(level_graph& graph) {
    using slot = aloe::shared_future<void>;
    const std::size_t length = graph.length();
    std::vector<slot> previous(length), current(length);
    for (std::size_t i = 0; i < length; ++i) {
        graph_node* n = &graph.at(0, i);
        current[i] = aloe::async([n] { n->visit(); }).share();
    }
    for (std::size_t level = 1; level < graph.levels(); ++level) {
        std::swap(previous, current);
        for (std::size_t i = 0; i < length; ++i) {
            graph_node* n = &graph.at(level, i);
            std::vector<slot> parents;
            parents.reserve(n->in.size());
            for (const auto& [parent, edge] : n->in) parents.push_back(previous[static_cast<std::size_t>(parent)]);
            current[i] = aloe::dataflow([n](const std::vector<slot>&) { n->visit(); }, std::move(parents)).share();
        }
    }
    // Every node of a level above the last has a child (the generator gives each node of
    // the next level a parent), so the last level finishing means the graph finished.
    for (const slot& s : current) s.wait();
}

struct counted_graph {
    level_graph& graph;
    std::unique_ptr<std::atomic<int>[]> waiting;  // unfinished parents per node
    aloe::task_group group;

    std::atomic<int>& count(std::size_t level, std::size_t i) { return waiting[level * graph.length() + i]; }
    void run_node(std::size_t level, std::size_t i) {
        graph_node& n = graph.at(level, i);
        n.visit();
        if (level + 1 == graph.levels()) return;
        for (int child : n.out) {
            const auto c = static_cast<std::size_t>(child);
            if (count(level + 1, c).fetch_sub(1, std::memory_order_acq_rel) == 1)
                group.run([this, level, c] { run_node(level + 1, c); });
        }
    }
};

void traverse_group(level_graph& graph) {
    counted_graph c{graph, std::make_unique<std::atomic<int>[]>(graph.levels() * graph.length()), {}};
    for (std::size_t level = 0; level < graph.levels(); ++level)
        for (std::size_t i = 0; i < graph.length(); ++i)
            c.count(level, i).store(static_cast<int>(graph.at(level, i).in.size()), std::memory_order_relaxed);
    for (std::size_t i = 0; i < graph.length(); ++i) c.group.run([&c, i] { c.run_node(0, i); });
    c.group.wait();
}

}  // namespace

void run_graph_traversal(const options& o) {
    const std::string variant = o.variant.empty() ? "dataflow" : o.variant;
    void (*traverse)(level_graph&) = nullptr;
    if (variant == "dataflow") traverse = traverse_dataflow;
    else if (variant == "group") traverse = traverse_group;
    else bad_choice("graph_traversal", "variant", variant, "dataflow, group");

    print_header("|V|+|E|", "Runtime");
    for (std::size_t i = 1; i <= 2048; i <<= 1) {
        level_graph graph(i, i);
        double total_us = 0;
        for (unsigned round = 0; round < o.num_rounds; ++round) {
            total_us += static_cast<double>(time_us([&] { traverse(graph); }).count());
            if (!graph.all_visited()) fail("graph_traversal", "a node of the " + std::to_string(i) + "-level graph was not visited");
            graph.clear();
        }
        print_row(graph.size(), total_us, o.num_rounds);
    }
}

}  // namespace taskflow_ports
