#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000; volatile int sink = 0;
    for (int i = 0; i < n; ++i) {
#pragma omp parallel
        { sink += omp_get_thread_num(); }
    }
    printf("%d\n", sink > -1);
    return 0;
}
