// The slack policy end to end: libaloe-mpi preloaded into a program that links libaloe.so.
// Each step rank 0 computes `--delay-ms` longer than the others before an MPI_Allreduce, so
// every other rank waits there about that long; between the two, every rank runs one loop
// with the schedule given. With `--expect lowered` the ranks other than 0 must have had
// their dynamic fraction lowered (slack far beyond the loop's whole dynamic part); with
// `--expect untouched` no rank's loop may have a slack policy at all. Prints each rank's
// site statistics (its policies) and exits 1 when the expectation fails.
#include <aloe/aloe.hpp>

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

void spin_for(double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string schedule = "hybrid,fs=0.5,slack=on", expect = "lowered";
    double delay_ms = 20;
    int steps = 30;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--schedule")) schedule = argv[i + 1];
        else if (!std::strcmp(argv[i], "--expect")) expect = argv[i + 1];
        else if (!std::strcmp(argv[i], "--delay-ms")) delay_ms = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    }
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<double> x(1 << 16, 1.0);
    double sum = 0, total = 0;
    for (int step = 0; step < steps; ++step) {
        if (rank == 0) spin_for(delay_ms * 1e-3);
        aloe::parallel_for(0, static_cast<std::int64_t>(x.size()), schedule,
                           [&](std::int64_t i) { x[static_cast<std::size_t>(i)] = std::sqrt(x[static_cast<std::size_t>(i)] + 1.0); },
                           aloe::loop_site("slack_loop"));
        sum = x[0];
        MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    bool ok = true;
    bool found = false;
    for (const aloe::site_stats& s : aloe::all_site_stats()) {
        if (s.site != "slack_loop") continue;
        found = true;
        const aloe::policy_status* slack = nullptr;
        for (const aloe::policy_status& p : s.policies)
            if (p.name == "slack") slack = &p;
        if (slack == nullptr || !slack->slack) {
            std::printf("rank %d: slack_loop has no slack policy (schedule %s)\n", rank, s.schedule.c_str());
            ok = expect == "untouched";
            continue;
        }
        const aloe::slack_stats& k = *slack->slack;
        std::printf("rank %d: slack_loop after %s: lowered %llu of %llu, fd %.3f -> %.3f, predicted %.1f us, "
                    "actual %.1f us, guard '%s'\n",
                    rank, k.call.c_str(), static_cast<unsigned long long>(k.lowered),
                    static_cast<unsigned long long>(k.planned), k.fd_before_mean, k.fd_after_mean,
                    k.predicted_mean_s * 1e6, k.actual_mean_s * 1e6, k.guard.c_str());
        if (expect == "untouched") ok = false;
        if (expect == "lowered" && rank != 0)
            ok = k.lowered > 0 && k.fd_after_mean < k.fd_before_mean && k.call.rfind("MPI_Allreduce", 0) == 0;
    }
    if (!found) ok = false;
    MPI_Finalize();
    return ok ? 0 : 1;
}
