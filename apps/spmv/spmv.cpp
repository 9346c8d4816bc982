// spmv: sparse matrix-vector products over the rows of a CSR matrix with power-law row
// lengths (power_law_matrix.hpp), the kernel of PageRank, graph analytics and Krylov solvers.
// A row's cost is its length, which varies by orders of magnitude and irregularly from row to
// row, and the long rows gather near the top (vertices numbered by degree), so a static split
// of the rows is badly balanced and a dynamic one must cope with a few very long rows: at the
// defaults the first half of the rows holds 84% of the entries, so a static split gives the
// busiest thread 1.7x the mean on 2 threads, 2.7x on 4 and 4.2x on 8 (counted in entries;
// --skew 0 removes the trend). Rows are short (16 entries on average), so per-chunk overheads
// of fine-grained dynamic schedules show.
//
// Each timestep is one sweep of the damped fixed-point iteration x <- d A x + b (the form of
// PageRank's power iteration): A's rows sum to 1 and d < 1, so x stays bounded and converges,
// and b varies by row, so the limit is not a constant vector. Row i
// is summed left to right by whichever thread runs it, so every runtime and schedule gives the
// same bits; the checksum is the serial sum of the final x. Checks: sampled rows of the last
// sweep (--check full: every row, and a serial re-run of every sweep), bit for bit.
#include "common/harness.hpp"
#include "power_law_matrix.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using aloe_apps::spmv::csr_matrix;

// PageRank's customary damping factor (Page, Brin, Motwani, Winograd 1999).
constexpr double damping = 0.85;
// Rows compared by the quick check, spread evenly (plus the longest row): a guess, cheap
// next to one sweep.
constexpr std::int64_t quick_sample_rows = 64;

/// Row i of d A x + b, its products summed in column order.
double sweep_row(const csr_matrix& a, const std::vector<double>& x, const std::vector<double>& b, std::int64_t i) {
    const auto row = static_cast<std::size_t>(i);
    double sum = 0;
    for (auto k = static_cast<std::size_t>(a.row_start[row]); k < static_cast<std::size_t>(a.row_start[row + 1]); ++k)
        sum += a.value[k] * x[static_cast<std::size_t>(a.column[k])];
    return damping * sum + b[row];
}

/// The rows the check recomputes: all of them, or `count` spread evenly plus the longest.
std::vector<std::int64_t> sample_rows(const csr_matrix& a, bool all) {
    std::vector<std::int64_t> rows;
    if (all || a.rows <= quick_sample_rows) {
        for (std::int64_t i = 0; i < a.rows; ++i) rows.push_back(i);
        return rows;
    }
    for (std::int64_t k = 0; k < quick_sample_rows; ++k) rows.push_back(k * (a.rows - 1) / (quick_sample_rows - 1));
    std::int64_t longest = 0;
    for (std::int64_t i = 1; i < a.rows; ++i)
        if (a.length(i) > a.length(longest)) longest = i;
    if (std::find(rows.begin(), rows.end(), longest) == rows.end()) rows.push_back(longest);
    return rows;
}

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("spmv", argc, argv, [](aloe_apps::harness& h) {
        h.default_steps(50, 3);  // a few ms a sweep: more steps for a stable median
        auto& f = h.flags();
        aloe_apps::spmv::matrix_shape shape;
        shape.rows = f.integer("--rows", 200000, "matrix rows (the threaded loop)");
        shape.mean_length = f.real("--mean-length", 16, "mean entries per row");
        shape.skew = f.real("--skew", 64, "first row's expected length / last row's, minus 1 (0: no trend)");
        const std::int64_t seed = f.integer("--seed", 1, "seed of the matrix and of b");
        if (shape.rows < 1 || shape.rows > std::numeric_limits<std::int32_t>::max())
            throw aloe_apps::usage_error("--rows must be in [1, 2^31)");
        if (!(shape.mean_length >= 1 && shape.mean_length <= 1e4))
            throw aloe_apps::usage_error("--mean-length must be in [1, 1e4]");
        if (!(shape.skew >= 0 && shape.skew <= 1e6)) throw aloe_apps::usage_error("--skew must be in [0, 1e6]");
        if (seed < 0) throw aloe_apps::usage_error("--seed must not be negative");
        shape.seed = static_cast<std::uint64_t>(seed);
        h.start();

        const csr_matrix a = aloe_apps::spmv::make_power_law_matrix(shape);
        const auto n = static_cast<std::size_t>(a.rows);
        std::int64_t longest = 0;
        for (std::int64_t i = 0; i < a.rows; ++i) longest = std::max(longest, a.length(i));
        h.param("rows", a.rows);
        h.param("nonzeros", a.nonzeros());
        h.param("mean_length", shape.mean_length);
        h.param("skew", shape.skew);
        h.param("seed", seed);
        h.param("longest_row", longest);

        // b in [0.5, 1.5) (1 - d), from its own stream (the golden-ratio offset is arbitrary).
        std::mt19937_64 rng(shape.seed + 0x9e3779b97f4a7c15u);
        std::vector<double> b(n);
        for (auto& v : b) v = (1 - damping) * (0.5 + static_cast<double>(rng() >> 11) * 0x1p-53);
        std::vector<double> x(n, 1.0);
        std::vector<double> y(n, 0.0);
        h.run_steps([&](int) {
            h.parallel_for("spmv/rows", a.rows,
                           [&](std::int64_t i) { y[static_cast<std::size_t>(i)] = sweep_row(a, x, b, i); });
            std::swap(x, y);  // x: this sweep's result; y: its input
        });

        const auto rows = sample_rows(a, h.full_check());
        if (h.corrupt_result()) x[static_cast<std::size_t>(rows[rows.size() / 2])] += 1.0;

        double sum = 0;
        for (const double v : x) sum += v;
        h.checksum(sum);

        std::int64_t differing = 0;
        for (const std::int64_t i : rows) differing += sweep_row(a, y, b, i) != x[static_cast<std::size_t>(i)];
        const std::string which = h.full_check() ? "every row" : std::to_string(rows.size()) + " sampled rows";
        h.check(differing == 0, "rows differing from a serial sweep of " + which, static_cast<double>(differing), 0);

        if (h.full_check()) {  // every sweep again, serially, from the same start
            std::vector<double> again(n, 1.0), next(n);
            for (int s = 0; s < h.warmup() + h.steps(); ++s) {
                for (std::int64_t i = 0; i < a.rows; ++i) next[static_cast<std::size_t>(i)] = sweep_row(a, again, b, i);
                std::swap(again, next);
            }
            std::int64_t moved = 0;
            for (std::size_t i = 0; i < n; ++i) moved += again[i] != x[i] ? 1 : 0;
            h.check(moved == 0, "rows differing from a serial re-run of every sweep", static_cast<double>(moved), 0);
        }
    });
}
