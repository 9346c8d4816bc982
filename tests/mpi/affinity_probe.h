/* Where a process's threads run, for the lending tests (lending_omp.c, lending_omp.f90):
 * the rank's own CPUs as the launcher bound it, whether the calling thread runs outside
 * them, and how many threads of the process are left with another mask. */
#pragma once

/* Remembers the calling thread's mask as the rank's own (call it first, from the main thread). */
void probe_remember_own_mask(void);

/* 1 when the calling thread runs on a CPU outside the rank's own mask, else 0. */
int probe_outside_own_cpus(void);

/* Threads of this process whose mask is not the rank's own (a borrowed core kept); -1 when
 * /proc/self/task cannot be read. */
int probe_threads_astray(void);
