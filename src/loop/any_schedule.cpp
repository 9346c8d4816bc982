#include "loop/any_schedule.hpp"

namespace aloe::loop {

void make_schedule(any_schedule& out, const loop_setup& setup) {
    const schedule& spec = setup.spec;
    switch (spec.kind()) {
        case schedule_kind::static_block:
            if (spec.chunk() > 0) out.emplace<static_cyclic>(setup);
            else out.emplace<static_blocks>(setup);
            return;
        case schedule_kind::dynamic: out.emplace<dynamic_chunks>(setup); return;
        case schedule_kind::guided: out.emplace<guided_chunks>(setup); return;
        case schedule_kind::hybrid: out.emplace<hybrid_split>(setup); return;
        case schedule_kind::staggered:
            if (spec.claim() == queue_claim::mutex) out.emplace<staggered_queues<queue_claim::mutex>>(setup);
            else out.emplace<staggered_queues<queue_claim::atomic>>(setup);
            return;
        case schedule_kind::weighted: out.emplace<weighted_split>(setup); return;
        case schedule_kind::tasklets: out.emplace<tasklet_queue>(setup); return;
        case schedule_kind::adaptive: break;  // resolved by the site's policy before this (site_policy.hpp)
    }
    out.emplace<static_blocks>(setup);
}

void commit_schedule(const any_schedule& s, std::span<const worker_record> records, site_history& h) {
    std::visit(
        [&](const auto& state) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(state)>, std::monostate>) state.commit(records, h);
        },
        s);
}

void make_site_schedule(any_schedule& out, site_state& st, const schedule& spec, std::uint64_t count, int threads,
                        runtime::arena& scratch) {
    if (spec.kind() != schedule_kind::adaptive) return make_schedule(out, loop_setup{count, threads, spec, st.history, scratch});
    const policy_choice choice = choose_adaptive(st.policy, spec, count, threads);
    make_schedule(out, loop_setup{count, threads, choice.run, st.history, scratch, choice.block_weights});
}

void commit_site_run(const any_schedule& s, site_state& st, const schedule& spec, std::span<const worker_record> records,
                     runtime::ticks t0, runtime::ticks t1) {
    commit_schedule(s, records, st.history);
    if (spec.kind() == schedule_kind::adaptive && st.policy) st.policy->observe(records, t0, t1);
    st.stats.add_parallel(records, t0, t1, spec);
}

}  // namespace aloe::loop
