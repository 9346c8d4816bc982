// A sparse matrix in CSR form whose row lengths follow a power law, built deterministically
// from a seed: the input of the spmv workload.
//
// It stands for the adjacency matrix of a scale-free graph (web, social, citation) whose
// vertices are numbered by decreasing degree, as graph codes often renumber them: row lengths
// shrink along the rows on average (a Zipf-like envelope), and around that envelope each row's
// length is drawn from a heavy-tailed (Pareto) law, so neighbouring rows differ a lot.
#pragma once

#include <cstdint>
#include <vector>

namespace aloe_apps::spmv {

struct csr_matrix {
    std::int64_t rows = 0;
    std::vector<std::int64_t> row_start;  // rows + 1 entries; row i is [row_start[i], row_start[i+1])
    std::vector<std::int32_t> column;     // sorted and distinct within a row
    std::vector<double> value;            // each row sums to 1 (up to rounding)

    std::int64_t length(std::int64_t row) const noexcept {
        return row_start[static_cast<std::size_t>(row) + 1] - row_start[static_cast<std::size_t>(row)];
    }
    std::int64_t nonzeros() const noexcept { return row_start.back(); }
};

struct matrix_shape {
    std::int64_t rows = 0;
    double mean_length = 16;  // requested mean entries per row (before duplicates are merged)
    double skew = 64;         // first row's expected length over the last row's, minus 1; 0: flat
    std::uint64_t seed = 1;
};

/// Builds the matrix. Row i's length is round(c * p_i / (1 + skew * i / rows)), at least 1 and
/// at most rows / 2, where p_i = 1 / sqrt(u) is Pareto with exponent 2 (P(p > t) = 1 / t^2,
/// mean 2) and c gives the requested mean. Columns are floor(rows * u^2), so low-numbered
/// columns (the hubs) are referenced most; duplicates are merged. Weights are uniform in
/// [0.5, 1.5), divided by the row's sum. u is the top 53 bits of std::mt19937_64, and every
/// transform is +, *, / or sqrt, so the matrix is the same on every C++ library.
/// Cost: O(nonzeros log(longest row)), serial.
csr_matrix make_power_law_matrix(const matrix_shape& shape);

}  // namespace aloe_apps::spmv
