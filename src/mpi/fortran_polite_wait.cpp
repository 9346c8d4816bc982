// The Fortran side of the polite waits: the library's Fortran functions, looked up once per
// mangling, and one case per call of the C wrappers' polite list (pmpi_c.cpp).
#include "mpi/fortran_polite_wait.hpp"
#include "mpi/rank_lending.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <type_traits>
#include <utility>

namespace aloe::mpi {
namespace {

using fint = MPI_Fint;  // a Fortran INTEGER (and default LOGICAL) as this MPI was built for

// The library functions a polite wait calls: nonblocking forms, tests, and what undoes a
// half-started MPI_Sendrecv.
#define ALOE_FORTRAN_HELPERS(X)                                                                                 \
    X(test) X(testall) X(testany) X(testsome) X(iprobe) X(irecv) X(isend) X(cancel) X(wait) X(ibarrier) X(ibcast) \
        X(ireduce) X(iallreduce) X(iallgather) X(ialltoall) X(igather) X(iscatter)

enum class helper : std::uint8_t {
#define ALOE_HELPER_ENUM(n) n,
    ALOE_FORTRAN_HELPERS(ALOE_HELPER_ENUM)
#undef ALOE_HELPER_ENUM
};
constexpr const char* helper_names[] = {
#define ALOE_HELPER_NAME(n) #n,
    ALOE_FORTRAN_HELPERS(ALOE_HELPER_NAME)
#undef ALOE_HELPER_NAME
};
constexpr int helper_count = static_cast<int>(std::size(helper_names));

// The PMPI name: a profiling tool's wrappers of the mpi_ names (this library's among them)
// stay out of the loop.
void symbol_of(helper h, fortran_mangling m, char (&out)[48]) noexcept {
    const char* base = helper_names[static_cast<int>(h)];
    switch (m) {
    case fortran_mangling::bare: std::snprintf(out, sizeof out, "pmpi_%s", base); return;
    case fortran_mangling::underscore: std::snprintf(out, sizeof out, "pmpi_%s_", base); return;
    case fortran_mangling::two_underscores: std::snprintf(out, sizeof out, "pmpi_%s__", base); return;
    case fortran_mangling::f08: std::snprintf(out, sizeof out, "pmpi_%s_f08_", base); return;
    case fortran_mangling::capitals:
        std::snprintf(out, sizeof out, "PMPI_%s", base);
        for (char* c = out; *c != '\0'; ++c) *c = static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
        return;
    }
}

// Looked up at first use; one the library lacks is remembered as missing and its calls wait
// as the library does.
char missing_marker;
std::atomic<void*> resolved[fortran_mangling_count][helper_count];

void* library_function(helper h, fortran_mangling m) noexcept {
    std::atomic<void*>& slot = resolved[static_cast<int>(m)][static_cast<int>(h)];
    void* f = slot.load(std::memory_order_acquire);
    if (f == nullptr) {
        char name[48];
        symbol_of(h, m, name);
        f = dlsym(RTLD_NEXT, name);
        if (f == nullptr) f = &missing_marker;
        slot.store(f, std::memory_order_release);
    }
    return f == &missing_marker ? nullptr : f;
}

// Every argument of a Fortran binding is a reference.
template <class... A>
void call(void* f, A*... a) noexcept {
    using function = void (*)(std::conditional_t<true, void*, A>...);
    reinterpret_cast<function>(f)(static_cast<void*>(a)...);
}

// The nonblocking form takes the blocking one's first n arguments, then the request and ierror.
template <std::size_t... I>
void start_with(void* f, void* const* a, fint* request, fint* ierror, std::index_sequence<I...>) noexcept {
    call(f, a[I]..., request, ierror);
}

// A status nobody reads: larger than any MPI's Fortran status (OpenMPI's is 6 integers,
// MPICH's 5), f08's TYPE(MPI_Status) included.
struct scratch_status {
    fint words[32] = {};
};

// The loop of tests (`test(bool& done)` returns the test's ierror), then the ierror for the
// program, unless f08 left it out.
template <class Test>
bool wait_and_report(const timed_call& t, void* ierror, Test test) noexcept {
    const int rc = lend_during(t.row(), test).rc;
    if (ierror != nullptr) *static_cast<fint*>(ierror) = static_cast<fint>(rc);
    return true;
}

bool wait_request(const timed_call& t, void* test, fint* request, void* status, void* ierror) noexcept {
    return wait_and_report(t, ierror, [=](bool& done) {
        fint flag = 0, rc = 0;
        call(test, request, &flag, status, &rc);
        done = flag != 0;
        return static_cast<int>(rc);
    });
}

// A blocking call of N arguments (then `status`, when it has one, and ierror) on its
// nonblocking form: started with the first N, then tested politely; a start that fails
// reports its ierror. False when the library lacks either function.
template <std::size_t N>
bool start_then_wait(const timed_call& t, fortran_mangling m, helper nonblocking, void* const* a, void* status,
                     void* ierror) noexcept {
    void* start = library_function(nonblocking, m);
    void* test = library_function(helper::test, m);
    if (start == nullptr || test == nullptr) return false;
    fint request = 0, rc = 0;
    start_with(start, a, &request, &rc, std::make_index_sequence<N>{});
    if (rc != 0) {
        if (ierror != nullptr) *static_cast<fint*>(ierror) = rc;
        return true;
    }
    return wait_request(t, test, &request, status, ierror);
}

// A collective of N arguments before ierror.
template <std::size_t N>
bool collective(const timed_call& t, fortran_mangling m, helper nonblocking, void* const* a) noexcept {
    if (!polite_collectives()) return false;
    scratch_status unread;
    return start_then_wait<N>(t, m, nonblocking, a, unread.words, a[N]);
}

// MPI_SENDRECV(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
// source, recvtag, comm, status, ierror): the receive posted first, as the C wrapper does;
// the program's status goes to the receive's test.
bool sendrecv(const timed_call& t, fortran_mangling m, void* const* a) noexcept {
    void* irecv = library_function(helper::irecv, m);
    void* isend = library_function(helper::isend, m);
    void* test = library_function(helper::test, m);
    void* cancel = library_function(helper::cancel, m);
    void* wait = library_function(helper::wait, m);
    if (irecv == nullptr || isend == nullptr || test == nullptr || cancel == nullptr || wait == nullptr) return false;
    void* const ierror = a[12];
    fint receive = 0, send = 0, rc = 0;
    call(irecv, a[5], a[6], a[7], a[8], a[9], a[10], &receive, &rc);
    if (rc == 0) {
        call(isend, a[0], a[1], a[2], a[3], a[4], a[10], &send, &rc);
        if (rc != 0) {  // the receive was posted: cancel it and complete it
            fint ignored = 0;
            scratch_status unread;
            call(cancel, &receive, &ignored);
            call(wait, &receive, unread.words, &ignored);
        }
    }
    if (rc != 0) {
        if (ierror != nullptr) *static_cast<fint*>(ierror) = rc;
        return true;
    }
    bool sent = false, received = false;
    return wait_and_report(t, ierror, [&](bool& done) {
        fint flag = 0, test_rc = 0;
        if (!sent) {
            scratch_status unread;
            call(test, &send, &flag, unread.words, &test_rc);
            sent = flag != 0;
        }
        if (test_rc == 0 && !received) {
            flag = 0;
            call(test, &receive, &flag, a[11], &test_rc);
            received = flag != 0;
        }
        done = sent && received;
        return static_cast<int>(test_rc);
    });
}

}  // namespace

bool wait_fortran_politely(const timed_call& t, mpi_call c, fortran_mangling m, void* const* a) noexcept {
    if (!t.outer()) return false;
    switch (c) {
    case mpi_call::Barrier: return collective<1>(t, m, helper::ibarrier, a);
    case mpi_call::Bcast: return collective<5>(t, m, helper::ibcast, a);
    case mpi_call::Reduce: return collective<7>(t, m, helper::ireduce, a);
    case mpi_call::Allreduce: return collective<6>(t, m, helper::iallreduce, a);
    case mpi_call::Allgather: return collective<7>(t, m, helper::iallgather, a);
    case mpi_call::Alltoall: return collective<7>(t, m, helper::ialltoall, a);
    case mpi_call::Gather: return collective<8>(t, m, helper::igather, a);
    case mpi_call::Scatter: return collective<8>(t, m, helper::iscatter, a);
    default: break;
    }
    if (kind_of(c) == call_kind::lifetime || !polite_point_to_point()) return false;
    switch (c) {
    case mpi_call::Wait: {  // (request, status, ierror)
        void* test = library_function(helper::test, m);
        return test != nullptr && wait_request(t, test, static_cast<fint*>(a[0]), a[1], a[2]);
    }
    case mpi_call::Waitall: {  // (count, requests, statuses, ierror)
        void* testall = library_function(helper::testall, m);
        return testall != nullptr && wait_and_report(t, a[3], [=](bool& done) {
                   fint flag = 0, rc = 0;
                   call(testall, a[0], a[1], &flag, a[2], &rc);
                   done = flag != 0;
                   return static_cast<int>(rc);
               });
    }
    case mpi_call::Waitany: {  // (count, requests, index, status, ierror)
        void* testany = library_function(helper::testany, m);
        return testany != nullptr && wait_and_report(t, a[4], [=](bool& done) {
                   fint flag = 0, rc = 0;
                   call(testany, a[0], a[1], a[2], &flag, a[3], &rc);
                   done = flag != 0;  // also with no active request (index MPI_UNDEFINED)
                   return static_cast<int>(rc);
               });
    }
    case mpi_call::Waitsome: {  // (incount, requests, outcount, indices, statuses, ierror)
        void* testsome = library_function(helper::testsome, m);
        return testsome != nullptr && wait_and_report(t, a[5], [=](bool& done) {
                   fint rc = 0;
                   call(testsome, a[0], a[1], a[2], a[3], a[4], &rc);
                   done = *static_cast<fint*>(a[2]) != 0;  // some completed, or none active (MPI_UNDEFINED)
                   return static_cast<int>(rc);
               });
    }
    case mpi_call::Recv:  // (buf, count, datatype, source, tag, comm, status, ierror)
        return start_then_wait<6>(t, m, helper::irecv, a, a[6], a[7]);
    case mpi_call::Sendrecv: return sendrecv(t, m, a);
    case mpi_call::Probe: {  // (source, tag, comm, status, ierror)
        void* iprobe = library_function(helper::iprobe, m);
        return iprobe != nullptr && wait_and_report(t, a[4], [=](bool& done) {
                   fint flag = 0, rc = 0;
                   call(iprobe, a[0], a[1], a[2], &flag, a[3], &rc);
                   done = flag != 0;
                   return static_cast<int>(rc);
               });
    }
    default: return false;  // no polite form: waits as the library does
    }
}

}  // namespace aloe::mpi
