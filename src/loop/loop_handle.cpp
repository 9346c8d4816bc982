// aloe::loop_handle: the public face of loop::shared_loop (threads aloe did not start ask
// for their chunks) over an iteration space of any bounds and step.
#include "loop/shared_loop.hpp"

#include <aloe/error.hpp>
#include <aloe/loop_handle.hpp>

#define ALOE_DETAIL_ALLOWED
#include <aloe/detail/iteration_space.hpp>
#undef ALOE_DETAIL_ALLOWED

#include <string>

namespace aloe::loop {

struct handle_state {
    detail::iteration_space space;
    site_ref site;  // held for the handle's life: the loop commits to it at the end
    shared_loop loop;
};

}  // namespace aloe::loop

namespace aloe {

loop_handle::loop_handle(std::int64_t first, std::int64_t last, std::int64_t step, const schedule& s, loop_site site)
    : state_(std::make_unique<loop::handle_state>()) {
    if (step == 0) throw error("aloe::loop_handle: step must not be 0");
    state_->space = detail::iteration_space::make(first, last, step);
    state_->site = loop::site_registry::instance().acquire(site);
    state_->loop.reset(state_->space.count, s, *state_->site);
}

loop_handle::loop_handle(std::int64_t first, std::int64_t last, const schedule& s, loop_site site)
    : loop_handle(first, last, 1, s, site) {}

loop_handle::~loop_handle() = default;

bool loop_handle::next(int thread, int num_threads, subrange& out) {
    loop::handle_state& h = *state_;
    if (!h.loop.built()) [[unlikely]] {
        if (num_threads < 1 || num_threads > loop::shared_loop::max_threads)
            throw error("aloe::loop_handle: num_threads " + std::to_string(num_threads) + " is outside [1, " +
                        std::to_string(loop::shared_loop::max_threads) + "]");
        h.loop.prepare(num_threads);
    }
    if (num_threads != h.loop.threads())
        throw error("aloe::loop_handle: num_threads " + std::to_string(num_threads) +
                    " differs from the first call's " + std::to_string(h.loop.threads()));
    if (thread < 0 || thread >= num_threads)
        throw error("aloe::loop_handle: thread " + std::to_string(thread) + " is outside [0, " +
                    std::to_string(num_threads) + ")");
    loop::chunk c;
    if (!h.loop.next(thread, num_threads, c)) return false;
    out = subrange(h.space.index(c.begin), h.space.bound(c.end), h.space.step, c.end - c.begin);
    return true;
}

}  // namespace aloe
