/* Lending to an unmodified MPI+OpenMP program under `aloe run --mpi --lend MODE` (issue 19):
 * 2 ranks bound one per core, rank 1 three times as heavy; each step K parallel regions
 * (no num_threads clause), each a schedule(runtime) loop, then an MPI_Allreduce where rank 0
 * waits and lends its core. Rank 1 prints what it saw, one `key value` per line:
 *   widest      the largest team a region got (2 once a borrowed core joined)
 *   foreign     regions in which a thread ran on a CPU outside the rank's own mask
 *   lost        loop iterations run other than exactly once (must be 0)
 *   astray      threads of the process whose mask after MPI_Finalize is not the rank's own
 * With the argument `reads-max-threads` (or `reads-num-procs`) the program calls
 * omp_get_max_threads() (omp_get_num_procs()) once, as a program that sizes per-thread arrays
 * by it does: its regions must then keep their count.
 * Exit 1 on a wrong count (lost), else 0: the test script (lending_omp_check.cmake) decides
 * what the lending mode should have produced. */
#include "affinity_probe.h"

#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

enum { iterations = 4096, steps = 30, regions_per_step = 4 };

static unsigned char hits[iterations];

/* About 1 us of arithmetic an iteration, `weight` times over. */
static double work(int i, int weight) {
    double x = i;
    for (int r = 0; r < weight * 300; ++r) x = x * 0.999999 + 1e-9;
    return x;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    probe_remember_own_mask();
    const int weight = rank == 1 ? 3 : 1;
    int widest = 0, foreign = 0, lost = 0;
    if (argc > 1 && strcmp(argv[1], "reads-max-threads") == 0 && omp_get_max_threads() < 1) lost = -1;
    if (argc > 1 && strcmp(argv[1], "reads-num-procs") == 0 && omp_get_num_procs() < 1) lost = -1;
    double sink = 0;
    for (int s = 0; s < steps; ++s) {
        for (int k = 0; k < regions_per_step; ++k) {
            memset(hits, 0, sizeof hits);
            int team = 0, strangers = 0;
#pragma omp parallel reduction(+ : sink, strangers)
            {
#pragma omp single
                team = omp_get_num_threads();
                if (probe_outside_own_cpus()) strangers = 1;
#pragma omp for schedule(runtime)
                for (int i = 0; i < iterations / regions_per_step; ++i) {
                    const int at = k * (iterations / regions_per_step) + i;
                    __atomic_fetch_add(&hits[at], 1, __ATOMIC_RELAXED);
                    sink += work(i, weight);
                }
            }
            if (team > widest) widest = team;
            if (strangers > 0) ++foreign;
            for (int i = k * (iterations / regions_per_step); i < (k + 1) * (iterations / regions_per_step); ++i)
                if (hits[i] != 1) ++lost;
        }
        double total = 0;
        MPI_Allreduce(&sink, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();  /* after it, no thread may sit on another rank's CPU */
    if (rank == 1) {
        printf("widest %d\nforeign %d\nlost %d\nastray %d\n", widest, foreign, lost, probe_threads_astray());
        fflush(stdout);
    }
    return lost != 0 ? 1 : 0;
}
