/* A program without OpenMP that loads an OpenMP module with dlopen(RTLD_LOCAL), as Python's
   ctypes and most plugin hosts do (dlopen_local). Its libgomp is then outside the global
   scope: before issue 12 the interposer found no libgomp there and jumped to a null entry
   point (SIGSEGV). Prints the sum, exits 0 when it is right. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: plugin_host <module.so>\n");
        return 2;
    }
    void* module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (module == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    long (*sum)(int) = NULL;
    *(void**)&sum = dlsym(module, "openmp_plugin_sum"); /* POSIX's way to a function pointer */
    if (sum == NULL) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 2;
    }
    const long got = sum(1000);
    printf("sum %ld\n", got);
    return got == 499500 ? 0 : 1;
}
