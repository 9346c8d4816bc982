// The Fortran entry points (mpif.h, `use mpi` and `use mpi_f08`). OpenMPI's Fortran bindings
// call the PMPI_ C functions directly (mpi_barrier_ is ompi_barrier_f, which calls
// PMPI_Barrier), so the C wrappers never see a Fortran program's calls: each Fortran name is
// wrapped here too, in the four manglings compilers use for mpif.h and `use mpi`
// (mpi_barrier, mpi_barrier_, mpi_barrier__, MPI_BARRIER) and the f08 module's
// (mpi_barrier_f08_), and forwarded to the next definition of the same name (the MPI
// library's, dlsym(RTLD_NEXT)). Every argument of these bindings is a reference (an absent
// optional ierror in f08: a null one), so each is passed on as the pointer it is: no handle
// conversion, and MPI_IN_PLACE, MPI_BOTTOM and MPI_STATUS_IGNORE keep the addresses the
// library recognises. The calls of the C wrappers' polite list wait politely here too
// (fortran_polite_wait.hpp).
#include "mpi/fortran_polite_wait.hpp"
#include "mpi/mpi_session.hpp"
#include "mpi/timed_call.hpp"
#include "runtime/report.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace aloe::mpi {
namespace {

/// The library's definition of one Fortran name, looked up at its first call.
class next_definition {
public:
    explicit constexpr next_definition(const char* name) noexcept : name_(name) {}
    void* get() noexcept {
        void* f = address_.load(std::memory_order_acquire);
        if (f != nullptr) return f;
        f = dlsym(RTLD_NEXT, name_);
        if (f == nullptr) {
            // The program called it, so an MPI library defines it, unless libaloe-mpi was
            // put after the library on the link line: nothing sensible can continue.
            runtime::report({runtime::report_level::fatal, runtime::report_category::mpi, "F601",
                             std::string("libaloe-mpi: no MPI library after it defines the Fortran entry ") + name_,
                             "link -laloe-mpi before the MPI libraries, or load it with aloe run --mpi"});
            std::abort();
        }
        address_.store(f, std::memory_order_release);
        return f;
    }

private:
    const char* name_;
    std::atomic<void*> address_{nullptr};
};

// After a successful MPI_INIT / MPI_INIT_THREAD: the error code is the last argument.
void after_fortran_init(const void* ierror) noexcept {
    if (ierror == nullptr || *static_cast<const int*>(ierror) == 0) after_init();
}

}  // namespace
}  // namespace aloe::mpi

// Parameter and argument lists of n references.
#define ALOE_P1 void* a1
#define ALOE_P2 ALOE_P1, void* a2
#define ALOE_P3 ALOE_P2, void* a3
#define ALOE_P4 ALOE_P3, void* a4
#define ALOE_P5 ALOE_P4, void* a5
#define ALOE_P6 ALOE_P5, void* a6
#define ALOE_P7 ALOE_P6, void* a7
#define ALOE_P8 ALOE_P7, void* a8
#define ALOE_P9 ALOE_P8, void* a9
#define ALOE_P10 ALOE_P9, void* a10
#define ALOE_P11 ALOE_P10, void* a11
#define ALOE_P12 ALOE_P11, void* a12
#define ALOE_P13 ALOE_P12, void* a13
#define ALOE_A1 a1
#define ALOE_A2 ALOE_A1, a2
#define ALOE_A3 ALOE_A2, a3
#define ALOE_A4 ALOE_A3, a4
#define ALOE_A5 ALOE_A4, a5
#define ALOE_A6 ALOE_A5, a6
#define ALOE_A7 ALOE_A6, a7
#define ALOE_A8 ALOE_A7, a8
#define ALOE_A9 ALOE_A8, a9
#define ALOE_A10 ALOE_A9, a10
#define ALOE_A11 ALOE_A10, a11
#define ALOE_A12 ALOE_A11, a12
#define ALOE_A13 ALOE_A12, a13
#define ALOE_LAST1 a1
#define ALOE_LAST3 a3

// What runs around the forwarded call: the lifetime calls tell the session.
#define ALOE_BEFORE_Finalize aloe::mpi::before_finalize();
#define ALOE_AFTER_Init(n) aloe::mpi::after_fortran_init(ALOE_LAST##n);
#define ALOE_AFTER_Init_thread(n) aloe::mpi::after_fortran_init(ALOE_LAST##n);

#define ALOE_FORTRAN_ENTRY(symbol, Name, n, before, after, mangling)                                          \
    extern "C" void symbol(ALOE_P##n) {                                                                       \
        static aloe::mpi::next_definition next{#symbol};                                                      \
        before {                                                                                              \
            aloe::mpi::timed_call t(ALOE_CALL_PATH(aloe::mpi::mpi_call::Name));                               \
            void* const args[] = {ALOE_A##n};                                                                 \
            if (!aloe::mpi::wait_fortran_politely(t, aloe::mpi::mpi_call::Name,                               \
                                                  aloe::mpi::fortran_mangling::mangling, args))               \
                reinterpret_cast<void (*)(ALOE_P##n)>(next.get())(ALOE_A##n);                                 \
        }                                                                                                     \
        after                                                                                                 \
    }

#define ALOE_FORTRAN_PLAIN(Name, lower, upper, n, before, after)                        \
    ALOE_FORTRAN_ENTRY(mpi_##lower, Name, n, before, after, bare)                       \
    ALOE_FORTRAN_ENTRY(mpi_##lower##_, Name, n, before, after, underscore)              \
    ALOE_FORTRAN_ENTRY(mpi_##lower##__, Name, n, before, after, two_underscores)        \
    ALOE_FORTRAN_ENTRY(MPI_##upper, Name, n, before, after, capitals)                   \
    ALOE_FORTRAN_ENTRY(mpi_##lower##_f08_, Name, n, before, after, f08)

#define ALOE_NOTHING
#define ALOE_FORTRAN_CALL(Name, lower, upper, kind, n) ALOE_FORTRAN_##kind(Name, lower, upper, n)
#define ALOE_FORTRAN_collective(Name, lower, upper, n) ALOE_FORTRAN_PLAIN(Name, lower, upper, n, ALOE_NOTHING, ALOE_NOTHING)
#define ALOE_FORTRAN_completion ALOE_FORTRAN_collective  // timed; polite where the rank lends
#define ALOE_FORTRAN_receive ALOE_FORTRAN_collective
#define ALOE_FORTRAN_lifetime(Name, lower, upper, n) ALOE_FORTRAN_lifetime_##Name(lower, upper, n)
#define ALOE_FORTRAN_lifetime_Init(lower, upper, n) ALOE_FORTRAN_PLAIN(Init, lower, upper, n, ALOE_NOTHING, ALOE_AFTER_Init(n))
#define ALOE_FORTRAN_lifetime_Init_thread(lower, upper, n) \
    ALOE_FORTRAN_PLAIN(Init_thread, lower, upper, n, ALOE_NOTHING, ALOE_AFTER_Init_thread(n))
#define ALOE_FORTRAN_lifetime_Finalize(lower, upper, n) \
    ALOE_FORTRAN_PLAIN(Finalize, lower, upper, n, ALOE_BEFORE_Finalize, ALOE_NOTHING)

ALOE_MPI_CALLS(ALOE_FORTRAN_CALL)
