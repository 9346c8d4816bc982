// The C API (include/aloe/aloe.h): thin wrappers that translate C conventions and never
// let an exception escape. Errors set a thread-local message.
#include <aloe/aloe.h>
#include <aloe/aloe.hpp>

#include "loop/schedules/spec_cache.hpp"
#include "runtime/c_error.hpp"

#include <cstdio>
#include <new>
#include <string>

namespace {

using aloe::runtime::c_fail;
aloe_status fail(aloe_status status, std::string message) { return c_fail(status, std::move(message)); }

// The schedule `text` names (NULL: ALOE_SCHEDULE) into `out`, parsed once per site and
// thread while the text at the site stays the same (loop/schedules/spec_cache.hpp).
aloe_status parse_schedule(const char* text, const aloe::loop_site& site, aloe::schedule& out) {
    if (text == nullptr) {
        out = aloe::detail::environment_schedule();
        return ALOE_OK;
    }
    std::string message;
    if (!aloe::loop::site_schedule(site, text, out, message)) return fail(ALOE_ERROR_SCHEDULE, message);
    return ALOE_OK;
}

struct c_body {
    const aloe::detail::iteration_space& space;
    aloe_body_fn body;
    void* ctx;

    static void run(void* p, std::uint64_t lo, std::uint64_t hi, int thread) noexcept {
        const auto& self = *static_cast<const c_body*>(p);
        self.body(self.space.index(lo), self.space.bound(hi), thread, self.ctx);
    }
};

}  // namespace

struct aloe_loop {
    aloe::loop_handle handle;
};

extern "C" {

const char* aloe_last_error(void) { return aloe::runtime::c_last_error(); }

int aloe_num_threads(void) {
    try {
        return aloe::team::global().size();
    } catch (const std::exception& e) {
        fail(ALOE_ERROR_INTERNAL, e.what());
        return 1;
    }
}

aloe_status aloe_parallel_for_site(int64_t first, int64_t last, int64_t step, const char* schedule, const char* site,
                                   aloe_body_fn body, void* ctx) {
    if (body == nullptr) return fail(ALOE_ERROR_ARGUMENT, "aloe_parallel_for: body is NULL");
    if (step == 0) return fail(ALOE_ERROR_ARGUMENT, "aloe_parallel_for: step must not be 0");
    try {
        char fallback_name[48];
        if (site == nullptr) {
            // Without a name, the body function identifies the loop.
            std::snprintf(fallback_name, sizeof fallback_name, "c-body@%p", reinterpret_cast<void*>(body));
            site = fallback_name;
        }
        const aloe::loop_site where{std::string_view(site)};
        aloe::schedule s;
        if (const aloe_status st = parse_schedule(schedule, where, s); st != ALOE_OK) return st;
        const auto space = aloe::detail::iteration_space::make(first, last, step);
        c_body adapter{space, body, ctx};
        aloe::detail::run_loop(aloe::team::global(), space, s, where, &c_body::run, &adapter);
        aloe::runtime::c_clear_error();
        return ALOE_OK;
    } catch (const std::exception& e) {
        return fail(ALOE_ERROR_INTERNAL, std::string("aloe_parallel_for: ") + e.what());
    }
}

aloe_status aloe_parallel_for(int64_t first, int64_t last, int64_t step, const char* schedule, aloe_body_fn body,
                              void* ctx) {
    return aloe_parallel_for_site(first, last, step, schedule, nullptr, body, ctx);
}

aloe_loop* aloe_loop_create(int64_t first, int64_t last, int64_t step, const char* schedule, const char* site) {
    if (step == 0) {
        fail(ALOE_ERROR_ARGUMENT, "aloe_loop_create: step must not be 0");
        return nullptr;
    }
    try {
        const aloe::loop_site where(std::string_view(site ? site : "c-loop"));
        aloe::schedule s;
        if (parse_schedule(schedule, where, s) != ALOE_OK) return nullptr;
        auto* loop = new aloe_loop{aloe::loop_handle(first, last, step, s, where)};
        aloe::runtime::c_clear_error();
        return loop;
    } catch (const std::exception& e) {
        fail(ALOE_ERROR_INTERNAL, std::string("aloe_loop_create: ") + e.what());
        return nullptr;
    }
}

int aloe_loop_next(aloe_loop* loop, int thread, int nthreads, int64_t* lo, int64_t* hi) {
    if (loop == nullptr || lo == nullptr || hi == nullptr) {
        fail(ALOE_ERROR_ARGUMENT, "aloe_loop_next: loop, lo and hi must not be NULL");
        return -1;
    }
    try {
        aloe::subrange r;
        if (!loop->handle.next(thread, nthreads, r)) return 0;
        *lo = r.first();
        *hi = r.bound();
        return 1;
    } catch (const std::exception& e) {
        fail(ALOE_ERROR_ARGUMENT, e.what());
        return -1;
    }
}

void aloe_loop_destroy(aloe_loop* loop) { delete loop; }

aloe_status aloe_stats_write(const char* path) {
    if (path == nullptr) return fail(ALOE_ERROR_ARGUMENT, "aloe_stats_write: path is NULL");
    try {
        std::string message;
        if (!aloe::write_stats_json(path, &message)) return fail(ALOE_ERROR_ARGUMENT, "aloe_stats_write: " + message);
        return ALOE_OK;
    } catch (const std::exception& e) {
        return fail(ALOE_ERROR_INTERNAL, std::string("aloe_stats_write: ") + e.what());
    }
}

}  // extern "C"
