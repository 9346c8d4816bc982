// How jacobi3d-mpi cuts one global grid into one block per rank: a process grid px × py × pz
// (z only, or three axes from MPI_Dims_create), each axis's interior points split evenly over
// its parts, one part of z optionally heavier (--heavy-rank). No MPI here: the same cut is
// computed on every rank, and on rank 0 for every other rank (the gather).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace jacobi3d_mpi {

/// Three sizes or offsets, x fastest in memory.
struct extent3 {
    std::int64_t x = 0, y = 0, z = 0;
    std::int64_t volume() const noexcept { return x * y * z; }
};

/// Ranks per axis; rank r sits at ((cz py) + cy) px + cx, x fastest.
struct process_grid {
    int px = 1, py = 1, pz = 1;
    int size() const noexcept { return px * py * pz; }
};

/// One rank's block: where it sits in the process grid and which global points it owns.
struct block {
    int rank = 0;
    std::array<int, 3> coords{};  // cx, cy, cz
    extent3 offset;               // global index of its first point per axis
    extent3 size;                 // points it owns per axis
};

/// Splits an axis of n points over `parts`: the n - 2 interior points (the ones a sweep
/// updates) go evenly to the parts, the first ones one more when they do not divide, or
/// with part `heavy` getting `factor` times the others' share (rounded, at least one point
/// and leaving at least one to each other part); part 0 also owns point 0 and the last part
/// point n - 1 (the fixed boundary). Returns the parts + 1 cuts, from 0 to n. Throws
/// usage_error (naming `flag`) when there are fewer interior points than parts.
std::vector<std::int64_t> split_axis(std::int64_t n, int parts, const std::string& flag, int heavy = -1,
                                     double factor = 1.0);

class decomposition {
public:
    /// Throws usage_error naming the flag at fault (a grid too small for the process grid,
    /// a heavy rank that does not exist).
    decomposition(extent3 global, process_grid grid, int heavy_rank, double heavy_factor);

    const extent3& global() const noexcept { return global_; }
    const process_grid& grid() const noexcept { return grid_; }
    int ranks() const noexcept { return grid_.size(); }
    block of(int rank) const;
    /// The rank at process-grid coordinates, or -1 outside the grid.
    int rank_at(int cx, int cy, int cz) const noexcept;

private:
    extent3 global_;
    process_grid grid_;
    std::vector<std::int64_t> cut_x_, cut_y_, cut_z_;
};

/// `z`: pz = ranks; `3d`: the three factors of MPI_Dims_create(ranks, 3) (`dims`, largest
/// first), the largest along z and the smallest along x (contiguous planes, longest rows);
/// `PXxPYxPZ`: that grid, which must have `ranks` ranks. Throws usage_error naming --decomp.
process_grid grid_for(const std::string& decomp, int ranks, const std::array<int, 3>& dims);
/// Checks the form of --decomp (no ranks needed): z, 3d (a 1x1x1 grid returned) or PXxPYxPZ.
process_grid parse_process_grid(const std::string& decomp);

/// --heavy-rank R[:FACTOR]: the rank (-1 for "" or "none") and its factor (default 1.5,
/// in (0, 100]); throws usage_error naming the flag. Whether R exists is checked later.
struct heavy_rank {
    int rank = -1;
    double factor = 1.0;
};
heavy_rank parse_heavy_rank(const std::string& text);

/// --noise-ranks: "all", or ranks and ranges, "0,2-3". Returns one flag per rank; throws
/// usage_error naming the flag for a rank that does not exist or a malformed list.
std::vector<bool> parse_rank_list(const std::string& flag, const std::string& text, int ranks);

}  // namespace jacobi3d_mpi
