/* MPI_THREAD_MULTIPLE: four threads of every rank call MPI_Allreduce at once, each on its own
 * duplicate of MPI_COMM_WORLD, 200 times; every result is checked and mpi_check.cmake checks
 * that all 800 calls were counted (the wrappers record without a lock). Exits 77 (skipped)
 * when the MPI does not provide MPI_THREAD_MULTIPLE. */
#include <mpi.h>

#include <pthread.h>
#include <stdio.h>

enum { threads = 4, calls = 200 };
static MPI_Comm comms[threads];
static int rank, size, wrong;

static void* work(void* arg) {
    const int t = (int)(long)arg;
    for (int i = 0; i < calls; ++i) {
        int x = rank + t + i, y = 0;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comms[t]);
        if (y != size * (t + i) + size * (size - 1) / 2) __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("thread_multiple: the MPI provides thread level %d only\n", provided);
        MPI_Finalize();
        return 77;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int t = 0; t < threads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t ids[threads];
    for (long t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, work, (void*)t);
    for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
    for (int t = 0; t < threads; ++t) MPI_Comm_free(&comms[t]);
    MPI_Finalize();
    if (wrong) fprintf(stderr, "thread_multiple: %d wrong results\n", wrong);
    return wrong ? 1 : 0;
}
