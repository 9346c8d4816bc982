// wavefront (taskflow/benchmarks/wavefront): an S × S matrix of doubles cut into 8 × 8
// blocks, MB × NB of them; block (i, j) runs after (i−1, j) and (i, j−1). The block's work is
// Taskflow's block_computation, which returns i + j and touches nothing, so this measures
// the dependency machinery alone. The matrix is made and filled (untimed) as theirs is, and
// the timed interval builds and runs the graph. The sweep is S = 8, 16, … 16384; a row's
// size is MB × NB.
//
// Variants: `dataflow` (default) makes each block an aloe::dataflow of the two blocks before
// it (a continuation on an edge, aloe::async at the corner), keeping only two rows of
// futures alive; `group` keeps a count of unfinished predecessors per block and runs a block
// on a task_group when its count reaches zero (Taskflow's own join counters, by hand).
#include "ports.hpp"

#include <aloe/task.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace taskflow_ports {
namespace {

constexpr int block_edge = 8;

struct grid {
    int rows = 0;        // MB
    int columns = 0;     // NB
};

// Taskflow's block_computation: a value nobody reads.
inline int block_work(int i, int j) { return i + j; }

void wavefront_dataflow(grid g) {
    using slot = aloe::shared_future<void>;
    std::vector<slot> above(static_cast<std::size_t>(g.columns)), row(static_cast<std::size_t>(g.columns));
    for (int i = 0; i < g.rows; ++i) {
        for (int j = 0; j < g.columns; ++j) {
            if (i == 0 && j == 0) {
                row[0] = aloe::async([] { (void)block_work(0, 0); }).share();
            } else if (i == 0) {
                row[j] = row[j - 1].then([j](const slot&) { (void)block_work(0, j); }).share();
            } else if (j == 0) {
                row[0] = above[0].then([i](const slot&) { (void)block_work(i, 0); }).share();
            } else {
                row[j] = aloe::dataflow([i, j](const slot&, const slot&) { (void)block_work(i, j); }, above[j],
                                        row[j - 1])
                             .share();
            }
        }
        std::swap(above, row);
    }
    // Block (MB−1, NB−1) is the last of every path.
    above[static_cast<std::size_t>(g.columns - 1)].wait();
}

struct counted_grid {
    grid g;
    std::unique_ptr<std::atomic<int>[]> waiting;  // unfinished predecessors per block
    aloe::task_group group;

    void release(int i, int j) {
        if (waiting[static_cast<std::size_t>(i) * g.columns + j].fetch_sub(1, std::memory_order_acq_rel) == 1)
            group.run([this, i, j] { run_block(i, j); });
    }
    void run_block(int i, int j) {
        (void)block_work(i, j);
        if (i + 1 < g.rows) release(i + 1, j);
        if (j + 1 < g.columns) release(i, j + 1);
    }
};

void wavefront_group(grid g) {
    counted_grid c{g, std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(g.rows) * g.columns), {}};
    for (int i = 0; i < g.rows; ++i)
        for (int j = 0; j < g.columns; ++j)
            c.waiting[static_cast<std::size_t>(i) * g.columns + j].store((i > 0) + (j > 0), std::memory_order_relaxed);
    c.group.run([&c] { c.run_block(0, 0); });
    c.group.wait();
}

}  // namespace

void run_wavefront(const options& o) {
    const std::string variant = o.variant.empty() ? "dataflow" : o.variant;
    void (*wavefront)(grid) = nullptr;
    if (variant == "dataflow") wavefront = wavefront_dataflow;
    else if (variant == "group") wavefront = wavefront_group;
    else bad_choice("wavefront", "variant", variant, "dataflow, group");

    print_header();
    for (int size = 8; size <= (1 << 14); size <<= 1) {
        const grid g{(size + block_edge - 1) / block_edge, (size + block_edge - 1) / block_edge};
        // The matrix of Taskflow's program: row arrays, element (i, j) = i·S + j (untimed).
        std::vector<std::unique_ptr<double[]>> matrix(static_cast<std::size_t>(size));
        for (int i = 0; i < size; ++i) {
            matrix[i] = std::make_unique<double[]>(static_cast<std::size_t>(size));
            for (int j = 0; j < size; ++j) matrix[i][j] = static_cast<double>(i) * size + j;
        }
        double total_us = 0;
        for (unsigned round = 0; round < o.num_rounds; ++round) {
            total_us += static_cast<double>(time_us([&] {
                            matrix[size - 1][size - 1] = 0;
                            wavefront(g);
                        }).count());
        }
        print_row(static_cast<std::size_t>(g.rows) * g.columns, total_us, o.num_rounds);
    }
}

}  // namespace taskflow_ports
