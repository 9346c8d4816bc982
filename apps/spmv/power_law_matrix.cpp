// Builds the spmv workload's matrix (power_law_matrix.hpp): power-law row lengths around a
// Zipf-like envelope, power-law column popularity, rows normalised to sum to 1.
#include "power_law_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace aloe_apps::spmv {
namespace {

// The top 53 bits of one draw, as a double. std::*_distribution is not used: its output
// differs between standard libraries, and the matrix must not.
double unit_open_right(std::mt19937_64& rng) {  // [0, 1)
    return static_cast<double>(rng() >> 11) * 0x1p-53;
}
double unit_open_left(std::mt19937_64& rng) {  // (0, 1]
    return static_cast<double>((rng() >> 11) + 1) * 0x1p-53;
}

double envelope(const matrix_shape& shape, std::int64_t row) {
    return 1.0 / (1.0 + shape.skew * static_cast<double>(row) / static_cast<double>(shape.rows));
}

}  // namespace

csr_matrix make_power_law_matrix(const matrix_shape& shape) {
    std::mt19937_64 rng(shape.seed);
    csr_matrix a;
    a.rows = shape.rows;
    a.row_start.reserve(static_cast<std::size_t>(shape.rows) + 1);
    a.row_start.push_back(0);

    // Scale so that the expected length, c * mean(envelope) * mean(Pareto) = c * mean * 2,
    // is the requested mean (the clamps below move it a little).
    double envelope_sum = 0;
    for (std::int64_t i = 0; i < shape.rows; ++i) envelope_sum += envelope(shape, i);
    const double scale = shape.mean_length / (2.0 * envelope_sum / static_cast<double>(shape.rows));
    const double longest = static_cast<double>(std::max<std::int64_t>(1, shape.rows / 2));
    const double rows = static_cast<double>(shape.rows);

    std::vector<std::int32_t> columns;
    for (std::int64_t i = 0; i < shape.rows; ++i) {
        const double pareto = 1.0 / std::sqrt(unit_open_left(rng));
        const double wanted = std::clamp(std::floor(scale * pareto * envelope(shape, i) + 0.5), 1.0, longest);
        columns.resize(static_cast<std::size_t>(wanted));
        for (auto& c : columns) {
            const double u = unit_open_right(rng);
            c = static_cast<std::int32_t>(std::min(rows - 1, std::floor(rows * u * u)));
        }
        std::sort(columns.begin(), columns.end());
        columns.erase(std::unique(columns.begin(), columns.end()), columns.end());

        const std::size_t first = a.value.size();
        double sum = 0;
        for (const std::int32_t c : columns) {
            const double w = 0.5 + unit_open_right(rng);
            a.column.push_back(c);
            a.value.push_back(w);
            sum += w;
        }
        for (std::size_t k = first; k < a.value.size(); ++k) a.value[k] /= sum;
        a.row_start.push_back(static_cast<std::int64_t>(a.value.size()));
    }
    return a;
}

}  // namespace aloe_apps::spmv
