// real(): libgomp's own entry points, found with dlsym(RTLD_NEXT) so the interposer can
// forward to them. RTLD_NEXT searches the objects loaded after this one: under LD_PRELOAD
// (aloe run) and when a test links libaloe-gomp before libgomp, that is libgomp. A libgomp
// that came in with a library dlopen()ed RTLD_LOCAL (a Python extension, a plugin) is not
// in the global scope RTLD_NEXT searches, although that library's GOMP_* calls still reach
// the interposer: it is then found by its soname among the loaded objects.
#include "omp/gomp_abi.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace aloe::omp {

void missing_entry_point(const char* name) {
    std::fprintf(stderr,
                 "aloe: fatal [omp]: the program called %s, which the GNU OpenMP runtime after "
                 "libaloe-gomp does not provide (is libgomp loaded? is it older than the compiler "
                 "that built the program?)\n",
                 name);
    std::abort();
}

const char* to_string(loop_form f) noexcept {
    switch (f) {
#define ALOE_FORM_NAME(id, name) \
    case loop_form::id: return #name;
        ALOE_GOMP_CHUNKED_FORMS(ALOE_FORM_NAME) ALOE_GOMP_RUNTIME_FORMS(ALOE_FORM_NAME)
#undef ALOE_FORM_NAME
        case loop_form::generic: return "generic";
        case loop_form::ordered: return "ordered";
        case loop_form::doacross: return "doacross";
    }
    return "?";
}

namespace {

// A reference to the loaded libgomp, kept for ever: the entry points taken from it must stay
// valid even if the library that brought it in is dlclose()d.
void* loaded_libgomp() {
    static void* const handle = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    return handle;
}

void* find(const char* name) {
    if (void* fn = dlsym(RTLD_NEXT, name)) return fn;
    void* const libgomp = loaded_libgomp();
    return libgomp != nullptr ? dlsym(libgomp, name) : nullptr;
}

template <class F>
void bind(F& fn, const char* name) {
    fn = reinterpret_cast<F>(find(name));
}

real_gomp load_real_gomp() {
    real_gomp r;
    bind(r.parallel, "GOMP_parallel");
    bind(r.parallel_start, "GOMP_parallel_start");
    bind(r.parallel_end, "GOMP_parallel_end");
    bind(r.parallel_sections, "GOMP_parallel_sections");
    bind(r.parallel_sections_start, "GOMP_parallel_sections_start");
    bind(r.barrier, "GOMP_barrier");
    bind(r.barrier_cancel, "GOMP_barrier_cancel");
    bind(r.loop_end, "GOMP_loop_end");
    bind(r.loop_end_nowait, "GOMP_loop_end_nowait");
    bind(r.loop_end_cancel, "GOMP_loop_end_cancel");
    bind(r.get_thread_num, "omp_get_thread_num");
    bind(r.get_num_threads, "omp_get_num_threads");
    bind(r.get_max_threads, "omp_get_max_threads");
    bind(r.get_level, "omp_get_level");
    bind(r.get_schedule, "omp_get_schedule");
    bind(r.cancellation_point, "GOMP_cancellation_point");
    bind(r.set_num_threads, "omp_set_num_threads");
    bind(r.set_num_threads_f, "omp_set_num_threads_");
    bind(r.set_num_threads_f8, "omp_set_num_threads_8_");
    // Every form's entry points; the ones libgomp lacks (the old combined `_start` of the
    // newer forms) stay null and are never called, since no compiler emits them.
    const auto fill = [](loop_form f, const std::string& form, real_gomp& out) {
        const auto i = static_cast<std::size_t>(f);
        out.start[i] = find(("GOMP_loop_" + form + "_start").c_str());
        out.next[i] = find(("GOMP_loop_" + form + "_next").c_str());
        out.ull_start[i] = find(("GOMP_loop_ull_" + form + "_start").c_str());
        out.ull_next[i] = find(("GOMP_loop_ull_" + form + "_next").c_str());
        out.combined[i] = find(("GOMP_parallel_loop_" + form).c_str());
        out.old_combined[i] = find(("GOMP_parallel_loop_" + form + "_start").c_str());
    };
#define ALOE_FILL_FORM(id, name) fill(loop_form::id, #name, r);
    ALOE_GOMP_CHUNKED_FORMS(ALOE_FILL_FORM) ALOE_GOMP_RUNTIME_FORMS(ALOE_FILL_FORM)
#undef ALOE_FILL_FORM
    r.start[static_cast<std::size_t>(loop_form::generic)] = find("GOMP_loop_start");
    r.ull_start[static_cast<std::size_t>(loop_form::generic)] = find("GOMP_loop_ull_start");
    return r;
}

}  // namespace

void* real_symbol(const char* name) { return find(name); }

namespace detail {

real_gomp real_table;
std::atomic<bool> real_loaded{false};

void load_real() {
    static std::once_flag once;
    std::call_once(once, [] {
        real_table = load_real_gomp();
        // Every caller reached here from a GOMP_* call, so libgomp must be loaded; without it,
        // say so instead of calling a null entry point.
        if (real_table.parallel == nullptr) missing_entry_point("GOMP_parallel (no libgomp.so.1 is loaded)");
        real_loaded.store(true, std::memory_order_release);
    });
}

}  // namespace detail

}  // namespace aloe::omp
