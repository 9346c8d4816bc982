// A program that uses both OpenMP (a dynamic loop, which `aloe run` interposes) and aloe's own
// library (a parallel_for with the schedule ALOE_SCHEDULE names). Prints the schedule its aloe
// loops use, so aloe_run_check.cmake (forward_program_links_libaloe) can tell what reached
// them; exits 3 when either loop missed an iteration. Built twice: linked to libaloe.so (the
// one aloe of the process, shared with aloe run's interposer) and to libaloe.a (a second copy:
// warning W015). Prints what it sees of aloe's registry: the sites of both kinds of loop are
// in it when there is one aloe per process.
#include <aloe/aloe.hpp>

#include <link.h>

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

// Loaded copies of libaloe.so (the program's static copy is not a loaded object).
int shared_copies() {
    int found = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* count) {
            const char* slash = std::strrchr(info->dlpi_name, '/');
            const char* base = slash != nullptr ? slash + 1 : info->dlpi_name;
            if (std::strncmp(base, "libaloe.so", 10) == 0) ++*static_cast<int*>(count);
            return 0;
        },
        &found);
    return found;
}

}  // namespace

int main() {
    constexpr std::int64_t n = 10000;
    std::atomic<std::int64_t> aloe_sum{0};
    aloe::parallel_for(0, n, [&](std::int64_t i) { aloe_sum.fetch_add(i, std::memory_order_relaxed); },
                       aloe::loop_site("run-test/aloe-loop"));
    std::int64_t omp_sum = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : omp_sum)
    for (std::int64_t i = 0; i < n; ++i) omp_sum += i;
    const std::int64_t expected = n * (n - 1) / 2;
    std::printf("aloe schedule: %s\n", aloe::schedule_from_environment().to_string().c_str());
    // The interposer names OpenMP loop sites "module+0xOFFSET"; aloe's own here "run-test/...".
    int omp_sites = 0, aloe_sites = 0;
    for (const aloe::site_stats& st : aloe::all_site_stats()) {
        omp_sites += st.site.find("+0x") != std::string::npos ? 1 : 0;
        aloe_sites += st.site.rfind("run-test/", 0) == 0 ? 1 : 0;
    }
    std::printf("registry: %d aloe sites, %d OpenMP sites; libaloe.so loaded %d times\n", aloe_sites, omp_sites,
                shared_copies());
    std::printf("sums %lld %lld\n", static_cast<long long>(aloe_sum.load()), static_cast<long long>(omp_sum));
    return aloe_sum.load() == expected && omp_sum == expected ? 0 : 3;
}
