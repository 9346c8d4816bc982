/* An OpenMP module loaded at run time (dlopen_local): a Python extension or a plugin built
   with GCC's -fopenmp looks like this to the interposer. */
/* Exported whatever the project's default visibility: the host finds it with dlsym. */
__attribute__((visibility("default"))) long openmp_plugin_sum(int n) {
    long sum = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : sum)
    for (int i = 0; i < n; ++i) sum += i;
    return sum;
}
