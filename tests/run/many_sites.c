/* More OpenMP loop call sites than the interposer's table holds (8192): 90 functions of 100
   worksharing loops each, stamped out by macros (every expansion is a call site of its own).
   Before issue 12's fix the 8193rd site was a record without aloe's site behind it, and the
   program died of SIGSEGV at its first loop (many_sites). Prints the sum, which does not
   depend on the schedule: 90 x the sum over k < 100 of (0 + 1 + 2 + 3k). */
#include <stdio.h>

#define LOOP(k)                                              \
    _Pragma("omp for schedule(dynamic) nowait")              \
    for (int i = 0; i < 3; ++i) s += i + (k);
#define L10(k) LOOP(k) LOOP(k + 1) LOOP(k + 2) LOOP(k + 3) LOOP(k + 4) LOOP(k + 5) LOOP(k + 6) LOOP(k + 7) \
    LOOP(k + 8) LOOP(k + 9)
#define L100 L10(0) L10(10) L10(20) L10(30) L10(40) L10(50) L10(60) L10(70) L10(80) L10(90)
#define FUNCTION(n)                                          \
    static long f##n(void) {                                 \
        long s = 0;                                          \
        _Pragma("omp parallel reduction(+ : s) num_threads(2)") \
        { L100 }                                             \
        return s;                                            \
    }
#define F10(d) FUNCTION(d##0) FUNCTION(d##1) FUNCTION(d##2) FUNCTION(d##3) FUNCTION(d##4) FUNCTION(d##5) \
    FUNCTION(d##6) FUNCTION(d##7) FUNCTION(d##8) FUNCTION(d##9)
F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9)

#define C10(d) f##d##0() + f##d##1() + f##d##2() + f##d##3() + f##d##4() + f##d##5() + f##d##6() + f##d##7() + \
    f##d##8() + f##d##9()

int main(void) {
    const long total = C10(1) + C10(2) + C10(3) + C10(4) + C10(5) + C10(6) + C10(7) + C10(8) + C10(9);
    printf("total %ld\n", total);
    return total == 1363500 ? 0 : 1;
}
