// jacobi3d-mpi: Kale & Gropp's model problem over MPI ranks (shared/reference/003, sections
// 1.3 and 2.2; apps/README.md, "jacobi3d-mpi"). One global grid, jacobi3d's (apps/jacobi3d),
// is cut into a block per rank (block_decomposition.hpp); each timestep exchanges the blocks'
// faces with MPI_Isend/MPI_Irecv/MPI_Waitall (halo_exchange.hpp), sweeps the rank's planes
// with the selected runtime and schedule (the harness's parallel_for), and agrees on the
// step's residual (max norm) with MPI_Allreduce. Two threading modes, as in the paper:
//   thread0  the thread that runs the loop does the halo exchange, then joins the loop over
//            all of the rank's planes (MPI_THREAD_FUNNELED);
//   overlap  a dedicated communication thread (communication_thread.hpp) does the exchange
//            while the team sweeps the points that need no halo; the points next to a
//            neighbour are swept once both are done (MPI_THREAD_SERIALIZED).
// --regions-per-step K cuts each of those loops into K loops over consecutive slabs of its
// planes, so a step opens K parallel regions per loop before its MPI call; every plane is
// swept as before, so the result does not change.
// Each point's update is jacobi3d's, so for every rank count, decomposition, mode, runtime
// and schedule the grid is bit-identical to a serial sweep; the checksum is taken on rank 0
// over the gathered grid in global order, so it is jacobi3d's checksum for the same grid and
// number of sweeps. Rank 0 prints the record, with each rank's per-step compute and wait
// times (rank_record.hpp); the other ranks print nothing but errors.
#include "block_decomposition.hpp"
#include "communication_thread.hpp"
#include "halo_exchange.hpp"
#include "local_block.hpp"
#include "mpi_job.hpp"
#include "rank_record.hpp"

#include "common/harness.hpp"
#include "common/json_writer.hpp"
#include "common/process_setup.hpp"
#include "common/result_check.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace jacobi3d_mpi;
using aloe_apps::usage_error;

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Local indices along an axis that need no ghost: the update range without the first and
/// last point where a neighbour lies on that side.
index_range without_halo(const index_range& update, std::int64_t size, bool lower_neighbour, bool upper_neighbour) {
    return {std::max(update.lo, std::int64_t{lower_neighbour ? 1 : 0}),
            std::min(update.hi, size - (upper_neighbour ? 1 : 0))};
}

/// The part of one plane that reads a ghost (overlap mode's second loop): up to four boxes.
struct shell_plane {
    std::int64_t k = 0;
    std::vector<plane_box> boxes;
};

/// The overlap mode's split of the update points: the interior box (planes `inner_z`, each
/// swept over `inner`) needs no ghost; `shell` is every other update point, by plane.
struct overlap_split {
    index_range inner_z;
    plane_box inner;
    std::vector<shell_plane> shell;
};

overlap_split split_for_overlap(const block_layout& l, const std::array<int, 6>& neighbours) {
    const auto has = [&](int side) { return neighbours[static_cast<std::size_t>(side)] != MPI_PROC_NULL; };
    overlap_split s;
    const index_range ix = without_halo(l.update_x(), l.size().x, has(0), has(1));
    const index_range iy = without_halo(l.update_y(), l.size().y, has(2), has(3));
    s.inner_z = without_halo(l.update_z(), l.size().z, has(4), has(5));
    s.inner = {ix, iy};
    if (s.inner.empty()) s.inner_z = {0, 0};  // every point reads a ghost
    const plane_box whole{l.update_x(), l.update_y()};
    for (std::int64_t k = l.update_z().lo; k < l.update_z().hi; ++k) {
        shell_plane p{k, {}};
        if (k < s.inner_z.lo || k >= s.inner_z.hi) {
            p.boxes.push_back(whole);
        } else {
            const index_range ux = l.update_x();
            const index_range uy = l.update_y();
            for (const plane_box& b : {plane_box{ux, {uy.lo, iy.lo}}, plane_box{ux, {iy.hi, uy.hi}},
                                       plane_box{{ux.lo, ix.lo}, iy}, plane_box{{ix.hi, ux.hi}, iy}}) {
                if (!b.empty()) p.boxes.push_back(b);
            }
        }
        if (!p.boxes.empty()) s.shell.push_back(std::move(p));
    }
    return s;
}

/// Runs body(p) for p in [0, n) as `regions` loops of one site over consecutive slabs (the
/// first n % regions get one more). A slab without a plane (more slabs than planes) runs no
/// loop: an empty loop is no region on aloe, and would only add a costs entry of 0 iterations.
template <class Body>
void slabbed_for(aloe_apps::harness& h, const char* site, std::int64_t n, std::int64_t regions, const Body& body) {
    for (std::int64_t r = 0; r < regions; ++r) {
        const std::int64_t lo = r * (n / regions) + std::min(r, n % regions);
        const std::int64_t size = n / regions + (r < n % regions ? 1 : 0);
        if (size > 0) h.parallel_for(site, size, [&body, lo](std::int64_t p) { body(lo + p); });
    }
}

/// The ranks whose flag is set, as a JSON array.
std::string chosen_ranks_json(const std::vector<bool>& chosen) {
    aloe_apps::json_writer j;
    j.begin_array();
    for (std::size_t r = 0; r < chosen.size(); ++r)
        if (chosen[r]) j.value(static_cast<int>(r));
    j.end_array();
    return j.text();
}

void run(aloe_apps::harness& h, mpi_job& job) {
    auto& f = h.flags();
    const std::int64_t n = f.integer("--n", 128, "global grid points per side (the default of --nx, --ny, --nz)");
    const extent3 global{f.integer("--nx", n, "global grid points along x (contiguous)"),
                         f.integer("--ny", n, "global grid points along y"),
                         f.integer("--nz", n, "global grid points along z (the planes the loop runs over)")};
    const std::string decomp = f.text("--decomp", "z",
                                      "z: ranks split z only; 3d: over x, y and z (MPI_Dims_create); PXxPYxPZ: that "
                                      "process grid, e.g. 2x1x2");
    const std::string mode = f.text("--mode", "thread0",
                                    "thread0: the loop's thread exchanges halos, then joins; overlap: a communication "
                                    "thread exchanges them while the team sweeps the interior");
    const std::string heavy_text =
        f.text("--heavy-rank", "none", "RANK[:FACTOR]: that rank's block gets FACTOR (default 1.5) times the planes of the others");
    const std::string noise_ranks = f.text("--noise-ranks", "all", "ranks that inject the --noise-* events: all, or e.g. 0,2-3");
    const std::string background_ranks =
        f.text("--background-ranks", "all", "ranks that run the --background child: all, or e.g. 0,2-3");
    const std::string comm_cpu =
        f.text("--comm-cpu", "any", "overlap mode: the CPU of the communication thread, or any of the rank's CPUs");
    const std::int64_t regions = f.integer("--regions-per-step", 1,
                                           "cut each loop of a step into this many loops (parallel regions) over "
                                           "consecutive slabs of its planes, 1 to 1000");

    if (global.x < 3 || global.y < 3 || global.z < 3)
        throw usage_error("flags --n, --nx, --ny, --nz: each must be at least 3 (one interior point), not " +
                          std::to_string(global.x) + " x " + std::to_string(global.y) + " x " + std::to_string(global.z));
    if (global.x > INT_MAX / global.y / global.z)
        throw usage_error("flags --n, --nx, --ny, --nz: the grid of " + std::to_string(global.x) + " x " + std::to_string(global.y) +
                          " x " + std::to_string(global.z) + " points is more than rank 0 gathers (2^31 - 1)");
    (void)parse_process_grid(decomp);  // the form now; the rank count once MPI runs
    if (mode != "thread0" && mode != "overlap") throw usage_error("--mode '" + mode + "': expected thread0 or overlap");
    const heavy_rank heavy = parse_heavy_rank(heavy_text);
    if (regions < 1 || regions > 1000)
        throw usage_error("--regions-per-step " + std::to_string(regions) + ": expected 1 to 1000");
    const bool overlap = mode == "overlap";
    h.default_steps(50, 3);

    // After the flags and the re-execution, before any thread: MPI, this rank's part.
    std::optional<decomposition> d;
    std::vector<bool> noisy;
    std::vector<bool> loaded;
    std::vector<int> comm_cpus;
    h.before_threads([&] {
        job.init(overlap ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED);
        h.writes_record(job.rank() == 0);
        std::array<int, 3> dims{0, 0, 0};
        MPI_Dims_create(job.size(), 3, dims.data());
        d.emplace(global, grid_for(decomp, job.size(), dims), heavy.rank, heavy.factor);
        noisy = parse_rank_list("--noise-ranks", noise_ranks, job.size());
        loaded = parse_rank_list("--background-ranks", background_ranks, job.size());
        h.noise_seed(h.noise_seed() + static_cast<std::uint64_t>(job.rank()));  // ranks differ, runs repeat
        if (!noisy[static_cast<std::size_t>(job.rank())]) h.without_noise();
        if (!loaded[static_cast<std::size_t>(job.rank())]) h.without_background();
        const std::vector<int> allowed = aloe_apps::allowed_cpus();
        if (comm_cpu == "any") {
            comm_cpus = allowed;
        } else {
            char* end = nullptr;
            const long c = std::strtol(comm_cpu.c_str(), &end, 10);
            if (comm_cpu.empty() || *end != '\0' || std::find(allowed.begin(), allowed.end(), c) == allowed.end())
                throw usage_error("--comm-cpu '" + comm_cpu + "': expected any or a CPU this rank may use");
            comm_cpus = {static_cast<int>(c)};
        }
    });
    job.agree([&] { h.start(); });

    const int rank = job.rank();
    const block me = d->of(rank);
    const block_layout lay(global, me);
    h.param("nx", global.x);
    h.param("ny", global.y);
    h.param("nz", global.z);
    h.param("ranks", job.size());
    h.param("decomposition", decomp);
    h.param("mode", mode);
    h.param("regions_per_step", regions);

    std::vector<double> cur = initial_block(lay);
    std::vector<double> next = cur;  // both hold the fixed boundary, which no sweep writes
    halo_exchange halo(MPI_COMM_WORLD, *d, me, lay);

    // thread0: one loop over every update plane. overlap: the interior, then the shell.
    const plane_box whole{lay.update_x(), lay.update_y()};
    const index_range planes = lay.update_z();
    const overlap_split split = split_for_overlap(lay, halo.neighbours());
    std::vector<double> plane_residual(static_cast<std::size_t>(planes.hi - planes.lo), 0.0);
    std::vector<double> inner_residual(static_cast<std::size_t>(std::max<std::int64_t>(split.inner_z.hi - split.inner_z.lo, 0)), 0.0);
    std::vector<double> shell_residual(split.shell.size(), 0.0);
    std::optional<communication_thread> comm;
    if (overlap) comm.emplace(comm_cpus);

    rank_record rec;
    rec.reserve(h.steps());
    double residual = 0;
    int sweeps = 0;
    h.run_steps([&](int s) {
        double* in = cur.data();
        double* out = next.data();
        double compute = 0;
        double wait = 0;
        double halo_s = 0;
        double local = 0;
        if (!overlap) {
            const double t0 = now_s();
            halo.post(in);
            const double t1 = now_s();
            halo.wait();
            const double t2 = now_s();
            slabbed_for(h, "jacobi3d-mpi/planes", planes.hi - planes.lo, regions, [&](std::int64_t p) {
                plane_residual[static_cast<std::size_t>(p)] = sweep_box(lay, in, out, planes.lo + p, whole);
            });
            const double t3 = now_s();
            for (const double r : plane_residual) local = std::max(local, r);
            halo_s = t2 - t0;
            wait = t2 - t1;
            compute = t3 - t2;
        } else {
            const double t0 = now_s();
            comm->run([&halo, in, &halo_s] {
                const double c0 = now_s();
                halo.post(in);
                halo.wait();
                halo_s = now_s() - c0;
            });
            if (!inner_residual.empty()) {
                const std::int64_t inner_planes = split.inner_z.hi - split.inner_z.lo;
                slabbed_for(h, "jacobi3d-mpi/interior", inner_planes, regions, [&](std::int64_t p) {
                    inner_residual[static_cast<std::size_t>(p)] = sweep_box(lay, in, out, split.inner_z.lo + p, split.inner);
                });
            }
            const double t1 = now_s();
            comm->wait();
            const double t2 = now_s();
            if (!shell_residual.empty()) {
                const auto shell_planes = static_cast<std::int64_t>(split.shell.size());
                slabbed_for(h, "jacobi3d-mpi/boundary", shell_planes, regions, [&](std::int64_t p) {
                    const shell_plane& sp = split.shell[static_cast<std::size_t>(p)];
                    double r = 0;
                    for (const plane_box& b : sp.boxes) r = std::max(r, sweep_box(lay, in, out, sp.k, b));
                    shell_residual[static_cast<std::size_t>(p)] = r;
                });
            }
            const double t3 = now_s();
            for (const double r : inner_residual) local = std::max(local, r);
            for (const double r : shell_residual) local = std::max(local, r);
            compute = (t1 - t0) + (t3 - t2);
            wait = t2 - t1;
        }
        const double a0 = now_s();
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);  // exact in any order
        wait += now_s() - a0;
        std::swap(cur, next);
        ++sweeps;
        if (s >= h.warmup()) {
            rec.compute_s.push_back(compute);
            rec.wait_s.push_back(wait);
            rec.halo_s.push_back(halo_s);
        }
    });
    comm.reset();
    // Now `cur` is the result and `next` the input of the last sweep, with the ghosts it read.

    // The record: each rank's times to rank 0; the job's step time is the slowest rank's.
    rec.rank = rank;
    rec.host = host_name();
    rec.cpus = aloe_apps::allowed_cpus();
    rec.thread_cpus = h.cpus();
    rec.threads = h.threads();
    rec.where = me;
    rec.step_s = h.step_seconds();
    rec.noise = h.injects_noise();
    rec.noise_seed = h.noise_seed();
    rec.noise_events = h.noise_events();
    rec.noise_injected_s = h.noise_injected_s();
    rec.background = h.runs_background();
    std::vector<double> job_steps(rec.step_s.size(), 0.0);
    MPI_Reduce(rec.step_s.data(), job_steps.data(), static_cast<int>(rec.step_s.size()), MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    const std::vector<std::string> ranks = gather_text(MPI_COMM_WORLD, rec.json());
    if (rank == 0) {
        h.step_seconds(job_steps);
        aloe_apps::json_writer m;
        const process_grid& pg = d->grid();
        m.begin_object().key("ranks").value(job.size()).key("mode").value(mode).key("decomposition").value(decomp);
        m.key("process_grid").begin_array().value(pg.px).value(pg.py).value(pg.pz).end_array();
        m.key("heavy_rank");
        if (heavy.rank >= 0) m.value(heavy.rank); else m.null();
        m.key("heavy_factor").value(heavy.rank >= 0 ? heavy.factor : 1.0);
        m.key("noise_ranks").raw(chosen_ranks_json(noisy)).key("background_ranks").raw(chosen_ranks_json(loaded));
        m.key("library").value(mpi_library_version()).key("thread_level").value(thread_level_name(job.provided()));
        m.end_object();
        h.record("mpi", m.text());
        std::string all = "[";
        for (std::size_t r = 0; r < ranks.size(); ++r) all += (r == 0 ? "" : ", ") + ranks[r];
        h.record("ranks", all + "]");
        aloe_apps::json_writer res;
        res.value(residual);
        h.record("residual", res.text());
    }

    // The result. --corrupt-result spoils the global centre point on the rank that owns it.
    if (h.corrupt_result()) {
        const extent3 c{global.x / 2 - me.offset.x, global.y / 2 - me.offset.y, global.z / 2 - me.offset.z};
        if (c.x >= 0 && c.y >= 0 && c.z >= 0 && c.x < me.size.x && c.y < me.size.y && c.z < me.size.z)
            cur[static_cast<std::size_t>(lay.at(c.x, c.y, c.z))] += 1.0;
    }

    // Quick check, on every rank: the last sweep again, serially, from the input it read.
    std::vector<double> again = next;
    const double local_again = sweep_all(lay, next, again);
    std::int64_t differ = aloe_apps::differing_values(owned_points(lay, again), owned_points(lay, cur));
    double residual_again = 0;
    MPI_Allreduce(MPI_IN_PLACE, &differ, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&local_again, &residual_again, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    h.check(differ == 0, "points that differ from a serial re-run of each rank's last sweep", static_cast<double>(differ), 0);
    h.check(residual_again == residual, "the last step's residual (max norm) against the serial re-run's", residual,
            residual_again);

    // The grid, gathered to rank 0 in global order: the checksum, and the full check there.
    const std::vector<double> mine = owned_points(lay, cur);
    std::vector<int> counts;
    std::vector<int> displacements;
    std::vector<double> gathered;
    if (rank == 0) {
        for (int r = 0; r < job.size(); ++r) {
            displacements.push_back(r == 0 ? 0 : displacements.back() + counts.back());
            counts.push_back(static_cast<int>(d->of(r).size.volume()));
        }
        gathered.resize(static_cast<std::size_t>(global.volume()));
    }
    MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, gathered.data(), counts.data(),
                displacements.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double checksum = 0;
    std::int64_t full_differ = 0;
    double full_residual = residual;
    if (rank == 0) {
        // Rank r's block, x fastest, into the global grid (x fastest): jacobi3d's layout.
        std::vector<double> grid(gathered.size());
        for (int r = 0; r < job.size(); ++r) {
            const block b = d->of(r);
            const double* from = gathered.data() + displacements[static_cast<std::size_t>(r)];
            for (std::int64_t k = 0; k < b.size.z; ++k)
                for (std::int64_t j = 0; j < b.size.y; ++j, from += b.size.x)
                    std::copy(from, from + b.size.x,
                              grid.begin() + ((b.offset.z + k) * global.y + b.offset.y + j) * global.x + b.offset.x);
        }
        for (const double v : grid) checksum += v;  // jacobi3d's order
        if (h.full_check()) {
            // Every sweep again, serially, on the whole grid as one block (no MPI).
            const block one{0, {0, 0, 0}, {0, 0, 0}, global};
            const block_layout whole_layout(global, one);
            std::vector<double> a = initial_block(whole_layout);
            std::vector<double> b = a;
            for (int s = 0; s < sweeps; ++s) {
                full_residual = sweep_all(whole_layout, a, b);
                std::swap(a, b);
            }
            full_differ = aloe_apps::differing_values(grid, owned_points(whole_layout, a));
        }
    }
    MPI_Bcast(&checksum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    h.checksum(checksum);
    if (h.full_check()) {
        MPI_Bcast(&full_differ, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
        MPI_Bcast(&full_residual, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        h.check(full_differ == 0,
                "points that differ from a serial re-run of all " + std::to_string(sweeps) + " sweeps of the whole grid",
                static_cast<double>(full_differ), 0);
        h.check(full_residual == residual, "the last step's residual against the serial re-run's", residual, full_residual);
    }
}

}  // namespace

int main(int argc, char** argv) {
    mpi_job job;
    const int status = aloe_apps::run_workload("jacobi3d-mpi", argc, argv, [&](aloe_apps::harness& h) { run(h, job); });
    return job.end(status);
}
