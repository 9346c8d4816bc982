// nqueens: count the ways to place --n queens on an n x n board, none attacking another
// (BOTS's and INNCABS's N-Queens), by backtracking row by row over bit masks of the columns
// and diagonals already taken. Above row --cutoff every legal square of a row is a task (all
// but the last, which this task searches itself), then the counts are joined; from the
// cutoff down a branch is searched serially. Branches die at every depth, so the tasks' sizes
// vary by orders of magnitude. One timestep is one whole count.
//
// Counts are integers, so every runtime gives the same number: checksum the count, checked
// against the published counts (OEIS A000170; n <= 20).
#include "common/harness.hpp"
#include "common/task_runtimes.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace {

using aloe_apps::usage_error;

constexpr int max_n = 20;
/// Solutions for n = 0 … 20 (OEIS A000170).
constexpr std::array<std::uint64_t, max_n + 1> known_counts = {
    1,       1,        0,        0,         2,          10,          4,           40,
    92,      352,      724,      2680,      14200,      73712,       365596,      2279184,
    14772512, 95815104, 666090624, 4968057848, 39029188884};

/// The board state above a row: columns and the two diagonals taken, as seen from that row.
struct board {
    std::uint32_t columns, left, right;
    int row;

    board place(std::uint32_t bit) const noexcept {
        return {columns | bit, (left | bit) << 1, (right | bit) >> 1, row + 1};
    }
};

std::uint64_t count_serial(const board& b, int n, std::uint32_t all) noexcept {
    if (b.row == n) return 1;
    std::uint64_t solutions = 0;
    for (std::uint32_t free = all & ~(b.columns | b.left | b.right); free != 0; free &= free - 1)
        solutions += count_serial(b.place(free & (~free + 1)), n, all);
    return solutions;
}

/// The count below `b` on the runtime of `rt` (common/task_runtimes.hpp).
template <class Tasks>
std::uint64_t count(const Tasks& rt, const board& b, int n, int cutoff, std::uint32_t all) {
    if (b.row >= cutoff || b.row == n) return count_serial(b, n, all);
    std::array<std::uint64_t, max_n> found{};
    auto g = rt.make_group();
    int k = 0;
    std::uint32_t free = all & ~(b.columns | b.left | b.right);
    for (; free != 0; free &= free - 1, ++k) {
        const std::uint32_t bit = free & (~free + 1);
        if ((free & (free - 1)) == 0) {  // the last square: searched here
            found[k] = count(rt, b.place(bit), n, cutoff, all);
            break;
        }
        std::uint64_t* out = &found[k];
        const board next = b.place(bit);
        g.run([&rt, next, n, cutoff, all, out] { *out = count(rt, next, n, cutoff, all); });
    }
    g.wait();
    std::uint64_t solutions = 0;
    for (const std::uint64_t c : found) solutions += c;
    return solutions;
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("nqueens", argc, argv, [](aloe_apps::harness& h) {
        auto& f = h.flags();
        const std::int64_t n = f.integer("--n", 13, "board size (1..20)");
        const std::int64_t cutoff =
            f.integer("--cutoff", 4, "rows above CUTOFF spawn a task per legal square; below, serial");
        if (n < 1 || n > max_n)
            throw usage_error("flag --n: must be in [1, " + std::to_string(max_n) + "], not " + std::to_string(n));
        if (cutoff < 0) throw usage_error("flag --cutoff: must not be negative");
        h.task_workload();
        h.default_steps(10, 2);
        h.start();
        h.param("n", n);
        h.param("cutoff", cutoff);

        const int size = static_cast<int>(n);
        const int c = static_cast<int>(std::min<std::int64_t>(cutoff, n));
        const std::uint32_t all = (std::uint32_t{1} << size) - 1;
        std::uint64_t solutions = 0;
        h.run_steps([&](int) {
            aloe_apps::with_tasks(h, [&](const auto& rt) { solutions = count(rt, board{0, 0, 0, 0}, size, c, all); });
        });
        if (h.corrupt_result()) solutions += 1;
        h.checksum(static_cast<double>(solutions));
        const std::uint64_t expected = known_counts[static_cast<std::size_t>(n)];
        h.check(solutions == expected, "solutions against the published count (OEIS A000170)",
                static_cast<double>(solutions), static_cast<double>(expected));
    });
}
