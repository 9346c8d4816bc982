/* Runs a dynamic loop 10 times, then forks a child that runs no OpenMP code and exits
   (fork_child_counts_nothing). Before issue 12's fix the child inherited the parent's site
   counts and trace events and reported them as its own: the summary showed the loop twice. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    long sum = 0;
    for (int step = 0; step < 10; ++step) {
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : sum)
        for (int i = 0; i < 1000; ++i) sum += i;
    }
    const pid_t child = fork();
    if (child == 0) exit(0);  /* exit handlers run: the child writes its (empty) report */
    int status = 0;
    waitpid(child, &status, 0);
    printf("sum %ld\n", sum);
    return sum == 4995000 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
