// What is measured: EPCC's delay() body, the reference, and the loop constructs of both
// runtimes (aloe::parallel_for and libgomp's `#pragma omp`), built into the three test groups.
#pragma once

#include "measure.hpp"
#include "options.hpp"

#include <aloe/schedule.hpp>
#include <aloe/team.hpp>

#include <vector>

namespace aloe_overhead {

/// Delay iterations per microsecond: the fastest of several timed runs (EPCC calibrates
/// the same way; the fastest is the one no interruption inflated).
double delay_iters_per_us();

/// One construct of each runtime over `threads` iterations of delay(1), after which the
/// idle spin of its workers is measured (checks.hpp, idle_spin_us).
void gomp_spin_construct(int threads);
void aloe_spin_construct(aloe::team& team, int threads, const aloe::schedule& st);

/// The groups opt selects (fork, balanced, chunk), each with its reference first; `*_dl` are
/// the delay() lengths of each group's body.
std::vector<group> make_groups(const options& opt, aloe::team& team, int fork_dl, int balanced_dl, int chunk_dl);

}  // namespace aloe_overhead
