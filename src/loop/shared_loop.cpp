// shared_loop: see the header. Each thread steps its participant (loop_driver.hpp), writing
// only its own participant line; records are written once per thread, at its finish.
#include "loop/shared_loop.hpp"

#include <sched.h>

#include <mutex>

namespace aloe::loop {

template <class S>
bool shared_loop::step_schedule(shared_loop& h, int tid, chunk& c, bool finish) noexcept {
    participant& p = h.participants_[static_cast<std::size_t>(tid)];
    if (step(*std::get_if<S>(&h.sched_), p, c)) [[likely]]
        return true;
    // Only the call that ran out ends the account; later calls just answer false.
    if (finish && !p.closed) {
        p.closed = true;
        h.finish(tid);
    }
    return false;
}

shared_loop::stepper shared_loop::stepper_for(int thread, int threads) {
    prepare(threads);
    stepper out;
    participant& p = participants_[static_cast<std::size_t>(thread)];
    out.part = &p;
    std::visit(
        [&](auto& s) {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, std::monostate>) {
                out.fn = [](void*, participant&, chunk&) noexcept { return false; };
            } else {
                out.fn = &step_erased<S>;
                out.sched = &s;
                out.ends_in_order = !std::is_same_v<S, staggered_queues<queue_claim::atomic>> &&
                                    !std::is_same_v<S, staggered_queues<queue_claim::mutex>> &&
                                    !std::is_same_v<S, weighted_split> && !std::is_same_v<S, tasklet_queue>;
                if constexpr (std::is_same_v<S, dynamic_chunks>) {
                    if (std::atomic<std::uint64_t>* next = s.direct_next()) {
                        out.direct = {next, s.chunk_size(), s.count()};
                        p.account.start = p.account.static_end = runtime::now_ticks();  // no static part
                        p.at = participant::stage::dynamic_part;
                        p.direct_chunk = s.chunk_size();
                    }
                }
            }
        },
        sched_);
    return out;
}

bool shared_loop::step_empty(shared_loop&, int, chunk&, bool) noexcept { return false; }

void shared_loop::finish(int thread) noexcept {
    if (count_ == 0) return;  // counted once by build(); no thread has an account
    const auto t = static_cast<std::size_t>(thread);
    participants_[t].close(runtime::now_ticks(), records_[t]);
    finish_thread();
}

void shared_loop::reset(std::uint64_t count, const schedule& spec, site_state& site) {
    {
        std::lock_guard lock(batch_lock_);
        if (batch_.runs != 0 && (&site != batch_site_ || !(spec == batch_spec_))) flush_locked();
    }
    rewind_next_ = false;
    count_ = count;
    spec_ = spec;
    site_ = &site;
    threads_ = 0;
    scratch_.reset();
    sched_ = std::monostate{};
    records_ = {};
    participants_ = {};
    step_ = &step_empty;
    finished_.store(0, std::memory_order_relaxed);
    phase_.store(phase::unbuilt, std::memory_order_release);
}

bool shared_loop::rerun(std::uint64_t count, site_state& site) noexcept {
    // The same loop again (the steady state of a loop in a region's loop): build() may
    // rewind the last build instead of making it anew.
    // Only a run planned by no policy, of a schedule that can start over, is kept as it is.
    if (!batching_ || rewind_ == nullptr || phase_.load(std::memory_order_relaxed) != phase::ready ||
        count != count_ || &site != site_)
        return false;
    rewind_next_ = true;
    finished_.store(0, std::memory_order_relaxed);
    phase_.store(phase::unbuilt, std::memory_order_release);
    return true;
}

void shared_loop::build(int nt) {
    phase expected = phase::unbuilt;
    if (!phase_.compare_exchange_strong(expected, phase::building, std::memory_order_acq_rel)) {
        while (phase_.load(std::memory_order_acquire) != phase::ready) sched_yield();
        return;
    }
    const bool rewind = rewind_next_;
    rewind_next_ = false;
    if (rewind && nt == threads_ && !chain_applies(policy_scope::loop, &spec_)) {
        // Everything as the last build left it but the schedule's shared state and the
        // participants (records are written whole at each close).
        rewind_(sched_);
        for (int t = 0; t < nt; ++t) {
            participant& p = participants_[static_cast<std::size_t>(t)];
            p = participant{};
            p.cursor.id = t;
        }
        t0_ = runtime::now_ticks();
        phase_.store(phase::ready, std::memory_order_release);
        return;
    }
    if (rewind) {
        // Not the same after all (team size, a policy now): the full reset() skipped.
        scratch_.reset();
        sched_ = std::monostate{};
    }
    batching_ = false;
    rewind_ = nullptr;
    threads_ = nt;
    records_ = scratch_.make<worker_record>(static_cast<std::size_t>(nt));
    participants_ = scratch_.make<participant>(static_cast<std::size_t>(nt));
    for (int t = 0; t < nt; ++t) participants_[static_cast<std::size_t>(t)].cursor.id = t;
    if (count_ == 0) {
        // Counted here, by the one thread that builds, so that a site's calls() is how often
        // the program reached the loop (the threads of an empty loop have nothing to finish).
        step_ = &step_empty;
        record_empty_call(*site_, spec_);
    } else {
        batching_ = batch_limit_ != 0 && !reads_history(spec_) && !chain_applies(policy_scope::loop, &spec_);
        // A run committed now must not overtake those of the batch; nor may a team of another size join it.
        {
            std::lock_guard lock(batch_lock_);
            if (batch_.runs != 0 && (!batching_ || batch_.last.size() != static_cast<std::size_t>(nt))) flush_locked();
        }
        (void)setup_site_run(sched_, *site_, spec_, count_, nt, scratch_, site_->key_name);
        step_ = std::visit(
            [](auto& s) -> step_fn {
                using S = std::decay_t<decltype(s)>;
                if constexpr (std::is_same_v<S, std::monostate>) return &step_empty;
                else return &step_schedule<S>;
            },
            sched_);
        rewind_ = std::visit(
            [](auto& s) -> void (*)(any_schedule&) noexcept {
                using S = std::decay_t<decltype(s)>;
                if constexpr (requires(S& x) { x.rewind(); })
                    return [](any_schedule& a) noexcept {
                        if (S* held = std::get_if<S>(&a)) held->rewind();
                    };
                else return nullptr;
            },
            sched_);
    }
    t0_ = runtime::now_ticks();
    phase_.store(phase::ready, std::memory_order_release);
}

void shared_loop::finish_thread() {
    // acq_rel: the last thread sees every other thread's record.
    if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 != threads_) return;
    const runtime::ticks t1 = runtime::now_ticks();
    if (batching_) {
        std::lock_guard lock(batch_lock_);
        if (batch_.runs == 0) {  // a batch's runs share these (reset() and build() commit first)
            batch_site_ = site_;
            batch_spec_ = spec_;
        }
        batch_.add_run(records_, t0_, t1);
        if (batch_.runs >= batch_limit_) flush_locked();
        return;
    }
    std::lock_guard lock(site_->mutex);
    commit_site_run(sched_, *site_, spec_, records_, t0_, t1);
}

void shared_loop::flush() {
    std::lock_guard lock(batch_lock_);
    flush_locked();
}

void shared_loop::flush_locked() {
    if (batch_.runs == 0) return;
    {
        std::lock_guard lock(batch_site_->mutex);
        commit_site_runs(*batch_site_, batch_spec_, batch_);
    }
    batch_.clear();
}

}  // namespace aloe::loop
