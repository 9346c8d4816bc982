/* A bulk-synchronous MPI program whose imbalance is known exactly, to validate libaloe-mpi's
 * slack (issue 15, item 2). Each step every rank spins for its own delay d_r (wall clock, so
 * the delay holds on an oversubscribed node too), then calls MPI_Allreduce; every third step
 * it also spins a second, balanced delay and calls MPI_Barrier from another call site. The
 * rank's slack at a step is then max_j d_j − d_r, exactly, whatever the call costs.
 *
 * Delays vary: phase 1 (the first half) d_r = base + r·skew; phase 2 reverses the ranks
 * (d_r = base + (R−1−r)·skew); every `--late` steps rank (step mod R) is late by an extra
 * `late_us` (a one-off event no predictor should follow).
 *
 *   mpirun -np R known_slack [--steps 200] [--base-us 1000] [--skew-us 500] [--late 10]
 *        [--late-us 2000] [--json FILE]
 * Rank 0 writes JSON: per rank the expected slack of each step at each call (allreduce,
 * barrier), so a script compares them with ALOE_MPI_STATS (bench/micro/known_slack.py). */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void spin(double seconds) {
    const double end = now_s() + seconds;
    while (now_s() < end) {
    }
}

static double delay_of(int rank, int size, int step, int steps, double base, double skew, int late, double late_s) {
    const int position = step < steps / 2 ? rank : size - 1 - rank;
    double d = base + position * skew;
    if (late > 0 && step % late == late - 1 && rank == step % size) d += late_s;
    return d;
}

static int parse_int(const char* flag, const char* value, int lo) {
    char* end = NULL;
    const long v = value ? strtol(value, &end, 10) : 0;
    if (!value || *end != '\0' || v < lo || v > 100000000) {
        fprintf(stderr, "known_slack: %s needs an integer >= %d (got '%s')\n", flag, lo, value ? value : "");
        exit(2);
    }
    return (int)v;
}

int main(int argc, char** argv) {
    int steps = 200, late = 10;
    double base_us = 1000, skew_us = 500, late_us = 2000;
    const char* json = NULL;
    for (int i = 1; i < argc; ++i) {
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--steps")) steps = parse_int(argv[i], v, 2), ++i;
        else if (!strcmp(argv[i], "--base-us")) base_us = parse_int(argv[i], v, 0), ++i;
        else if (!strcmp(argv[i], "--skew-us")) skew_us = parse_int(argv[i], v, 0), ++i;
        else if (!strcmp(argv[i], "--late")) late = parse_int(argv[i], v, 0), ++i;
        else if (!strcmp(argv[i], "--late-us")) late_us = parse_int(argv[i], v, 0), ++i;
        else if (!strcmp(argv[i], "--json") && v) json = v, ++i;
        else {
            fprintf(stderr, "known_slack: unknown or incomplete argument '%s'\n", argv[i]);
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const double base = base_us * 1e-6, skew = skew_us * 1e-6, late_s = late_us * 1e-6;
    double expected_allreduce = 0, expected_barrier = 0;
    int barriers = 0;
    double value = 1, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int step = 0; step < steps; ++step) {
        double most = 0;
        for (int r = 0; r < size; ++r) {
            const double d = delay_of(r, size, step, steps, base, skew, late, late_s);
            most = d > most ? d : most;
        }
        const double mine = delay_of(rank, size, step, steps, base, skew, late, late_s);
        spin(mine);
        MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        expected_allreduce += most - mine;
        if (step % 3 == 2) {  /* balanced: no slack beyond the call's own cost */
            spin(base / 2);
            MPI_Barrier(MPI_COMM_WORLD);
            ++barriers;
        }
    }
    double mine[2] = {expected_allreduce, expected_barrier};
    double* all = rank == 0 ? malloc(sizeof(double) * 2 * (size_t)size) : NULL;
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE* out = json ? fopen(json, "w") : stdout;
        if (!out) {
            fprintf(stderr, "known_slack: cannot write %s\n", json);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fprintf(out, "{\"program\": \"known_slack\", \"ranks\": %d, \"steps\": %d, \"barriers\": %d, \"base_us\": %g, "
                     "\"skew_us\": %g, \"late\": %d, \"late_us\": %g, \"expected\": [",
                size, steps, barriers, base_us, skew_us, late, late_us);
        for (int r = 0; r < size; ++r)
            fprintf(out, "%s{\"rank\": %d, \"allreduce_slack_s\": %.9f, \"barrier_slack_s\": %.9f}", r ? ", " : "", r,
                    all[2 * r], all[2 * r + 1]);
        fprintf(out, "]}\n");
        if (json) fclose(out);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
