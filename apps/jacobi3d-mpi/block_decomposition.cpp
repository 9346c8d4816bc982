#include "block_decomposition.hpp"

#include "common/args.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace jacobi3d_mpi {

using aloe_apps::usage_error;

std::vector<std::int64_t> split_axis(std::int64_t n, int parts, const std::string& flag, int heavy, double factor) {
    const std::int64_t interior = n - 2;
    if (parts < 1 || interior < parts) {
        throw usage_error(flag + " " + std::to_string(n) + ": " + std::to_string(parts) + " ranks along this axis but only " +
                          std::to_string(std::max<std::int64_t>(interior, 0)) +
                          " interior point(s) (each rank needs at least one); use a larger grid or fewer ranks");
    }
    std::vector<std::int64_t> share(static_cast<std::size_t>(parts));
    if (heavy >= 0 && heavy < parts && parts > 1) {
        // The others get q each and the heavy part factor q: (parts - 1) q + factor q = interior.
        const double q = static_cast<double>(interior) / (parts - 1 + factor);
        const auto most = interior - (parts - 1);
        const std::int64_t h = std::clamp<std::int64_t>(std::llround(factor * q), 1, most);
        const std::int64_t rest = interior - h;
        int other = 0;
        for (int p = 0; p < parts; ++p) {
            if (p == heavy) {
                share[static_cast<std::size_t>(p)] = h;
            } else {
                share[static_cast<std::size_t>(p)] = rest / (parts - 1) + (other < rest % (parts - 1) ? 1 : 0);
                ++other;
            }
        }
    } else {
        for (int p = 0; p < parts; ++p) share[static_cast<std::size_t>(p)] = interior / parts + (p < interior % parts ? 1 : 0);
    }
    std::vector<std::int64_t> cuts{0};
    std::int64_t at = 1;  // the first interior point; part 0 also owns point 0
    for (int p = 0; p < parts; ++p) {
        at += share[static_cast<std::size_t>(p)];
        cuts.push_back(p == parts - 1 ? n : at);
    }
    return cuts;
}

decomposition::decomposition(extent3 global, process_grid grid, int heavy_rank, double heavy_factor)
    : global_(global), grid_(grid) {
    if (heavy_rank >= grid.size()) {
        throw usage_error("--heavy-rank " + std::to_string(heavy_rank) + ": the job has only " + std::to_string(grid.size()) +
                          " ranks (0 to " + std::to_string(grid.size() - 1) + ")");
    }
    // The heavy rank's layer of the process grid along z gets the larger share.
    const int heavy_z = heavy_rank < 0 ? -1 : heavy_rank / (grid.px * grid.py);
    cut_x_ = split_axis(global.x, grid.px, "--nx");
    cut_y_ = split_axis(global.y, grid.py, "--ny");
    cut_z_ = split_axis(global.z, grid.pz, "--nz", heavy_z, heavy_factor);
}

block decomposition::of(int rank) const {
    block b;
    b.rank = rank;
    const int cx = rank % grid_.px;
    const int cy = rank / grid_.px % grid_.py;
    const int cz = rank / (grid_.px * grid_.py);
    b.coords = {cx, cy, cz};
    const auto ux = static_cast<std::size_t>(cx), uy = static_cast<std::size_t>(cy), uz = static_cast<std::size_t>(cz);
    b.offset = {cut_x_[ux], cut_y_[uy], cut_z_[uz]};
    b.size = {cut_x_[ux + 1] - cut_x_[ux], cut_y_[uy + 1] - cut_y_[uy], cut_z_[uz + 1] - cut_z_[uz]};
    return b;
}

int decomposition::rank_at(int cx, int cy, int cz) const noexcept {
    if (cx < 0 || cy < 0 || cz < 0 || cx >= grid_.px || cy >= grid_.py || cz >= grid_.pz) return -1;
    return (cz * grid_.py + cy) * grid_.px + cx;
}

process_grid grid_for(const std::string& decomp, int ranks, const std::array<int, 3>& dims) {
    if (decomp == "z") return {1, 1, ranks};
    if (decomp == "3d") return {dims[2], dims[1], dims[0]};
    const process_grid g = parse_process_grid(decomp);
    if (g.size() != ranks) {
        throw usage_error("--decomp " + decomp + ": a process grid of " + std::to_string(g.size()) + " ranks for a job of " +
                          std::to_string(ranks));
    }
    return g;
}

process_grid parse_process_grid(const std::string& decomp) {
    if (decomp == "z" || decomp == "3d") return {};
    int p[3] = {0, 0, 0};
    std::size_t start = 0;
    for (int axis = 0; axis < 3; ++axis) {
        const std::size_t x = axis < 2 ? decomp.find('x', start) : decomp.size();
        const std::string part = x == std::string::npos ? std::string() : decomp.substr(start, x - start);
        char* end = nullptr;
        const long v = std::strtol(part.c_str(), &end, 10);
        if (part.empty() || *end != '\0' || v < 1 || v > 1'000'000)
            throw usage_error("--decomp '" + decomp + "': expected z, 3d or a process grid PXxPYxPZ such as 2x1x2");
        p[axis] = static_cast<int>(v);
        start = x + 1;
    }
    return {p[0], p[1], p[2]};
}

heavy_rank parse_heavy_rank(const std::string& text) {
    heavy_rank h;
    if (text.empty() || text == "none") return h;
    const std::size_t colon = text.find(':');
    const std::string rank = text.substr(0, colon);
    char* end = nullptr;
    const long r = std::strtol(rank.c_str(), &end, 10);
    if (rank.empty() || *end != '\0' || r < 0 || r > 1'000'000)
        throw usage_error("--heavy-rank '" + text + "': expected RANK[:FACTOR] with RANK a rank number, or none");
    h.rank = static_cast<int>(r);
    h.factor = 1.5;
    if (colon != std::string::npos) {
        const std::string factor = text.substr(colon + 1);
        const double f = std::strtod(factor.c_str(), &end);
        if (factor.empty() || *end != '\0' || !(f > 0) || f > 100)
            throw usage_error("--heavy-rank '" + text + "': FACTOR '" + factor + "' is not a number in (0, 100]");
        h.factor = f;
    }
    return h;
}

std::vector<bool> parse_rank_list(const std::string& flag, const std::string& text, int ranks) {
    std::vector<bool> chosen(static_cast<std::size_t>(ranks), text == "all");
    if (text == "all") return chosen;
    const auto bad = [&](const std::string& why) {
        return usage_error(flag + " '" + text + "': " + why + " (expected all, or ranks and ranges such as 0,2-3)");
    };
    if (text.empty()) throw bad("empty");
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, comma - start);
        const std::size_t dash = item.find('-');
        const std::string lo_text = item.substr(0, dash);
        const std::string hi_text = dash == std::string::npos ? lo_text : item.substr(dash + 1);
        char* end_lo = nullptr;
        char* end_hi = nullptr;
        const long lo = std::strtol(lo_text.c_str(), &end_lo, 10);
        const long hi = std::strtol(hi_text.c_str(), &end_hi, 10);
        if (lo_text.empty() || hi_text.empty() || *end_lo != '\0' || *end_hi != '\0' || lo < 0 || hi < lo)
            throw bad("'" + item + "' is not a rank or a range");
        if (hi >= ranks) throw bad("rank " + std::to_string(hi) + " does not exist in a job of " + std::to_string(ranks) + " ranks");
        for (long r = lo; r <= hi; ++r) chosen[static_cast<std::size_t>(r)] = true;
        start = comma + 1;
    }
    return chosen;
}

}  // namespace jacobi3d_mpi
