/* The bulk-synchronous pattern of issue 16 part 5, for SimGrid SMPI (driven by sim_peers.py).
 *
 * Every rank runs `steps` timesteps: compute `compute_s` seconds (plus the noise below), then
 * MPI_Allreduce of one double. The algorithm (recursive doubling), the network (L, o, G) and
 * the CPU speed come from the SimGrid configuration and platform that sim_peers.py passes to
 * smpirun; this program only decides how long each compute phase lasts.
 *
 * Noise: the per-rank trace that sim_peers.py converted from trace.json into a binary file
 * (int64 ncpus; int64 first[ncpus + 1]; then (start_s, length_s) double pairs, sorted per
 * rank). A compute phase starting at simulated time t0 lasts compute_s plus the length of
 * every event that starts inside it, the phase growing as events land in it (start in
 * [t0, end)). Events that start before t0, while the rank was in MPI_Allreduce, cost nothing.
 *
 *   smpicc -O2 -o sim_peers_smpi sim_peers_smpi.c
 *   smpirun -np P ... sim_peers_smpi STEPS COMPUTE_S HOST_FLOPS TRACE.bin
 *
 * Rank 0 prints one line: SIMPEERS total_s=<max over ranks of the end time> noise_s=<sum over
 * ranks of the noise injected> hits=<events that delayed a compute phase>.
 */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: %s STEPS COMPUTE_S HOST_FLOPS TRACE.bin\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int steps = atoi(argv[1]);
  const double compute_s = atof(argv[2]);
  const double flops = atof(argv[3]); /* the platform's host speed: seconds -> flops */

  /* this rank's events only: seek through the index */
  FILE *f = fopen(argv[4], "rb");
  int64_t ncpus = 0, lo = 0, hi = 0;
  if (!f || fread(&ncpus, 8, 1, f) != 1 || ncpus < size) {
    fprintf(stderr, "rank %d: bad trace %s\n", rank, argv[4]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fseek(f, 8 + 8 * rank, SEEK_SET);
  if (fread(&lo, 8, 1, f) != 1 || fread(&hi, 8, 1, f) != 1) MPI_Abort(MPI_COMM_WORLD, 2);
  const int64_t n = hi - lo;
  double *ev = malloc(sizeof(double) * 2 * (size_t)(n > 0 ? n : 1));
  fseek(f, 8 + 8 * (ncpus + 1) + 16 * lo, SEEK_SET);
  if (n > 0 && fread(ev, 16, (size_t)n, f) != (size_t)n) MPI_Abort(MPI_COMM_WORLD, 2);
  fclose(f);

  int64_t next = 0; /* first event not yet consumed */
  double noise = 0.0, x = rank, y = 0.0;
  int hits = 0;
  for (int s = 0; s < steps; ++s) {
    const double t0 = MPI_Wtime(); /* simulated clock (smpi/wtime:0 keeps it free) */
    double end = t0 + compute_s;
    while (next < n && ev[2 * next] < t0) ++next; /* arrived while waiting: free */
    while (next < n && ev[2 * next] < end) {      /* lands in the phase: delays it */
      end += ev[2 * next + 1];
      noise += ev[2 * next + 1];
      ++hits;
      ++next;
    }
    smpi_execute_flops((end - t0) * flops);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double t_end = MPI_Wtime(), t_max = 0.0, noise_sum = 0.0;
  int hits_sum = 0;
  /* bookkeeping after the timed part: these collectives do not change t_end */
  MPI_Reduce(&t_end, &t_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&noise, &noise_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&hits, &hits_sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("SIMPEERS total_s=%.12f noise_s=%.9f hits=%d\n", t_max, noise_sum, hits_sum);
  free(ev);
  MPI_Finalize();
  return 0;
}
