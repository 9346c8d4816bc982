#include "loop/any_schedule.hpp"

#include <algorithm>

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
        case schedule_kind::adaptive: break;  // resolved by the site's policy chain before this (policy_chain.hpp)
        case schedule_kind::tasks: {
            // parallel_for runs it on the task scheduler before this (task_loop.hpp); threads
            // aloe did not start (loop_handle, a taken OpenMP loop) take grain-sized chunks.
            const schedule chunks = schedule::dynamic(std::max<std::int64_t>(1, spec.chunk()));
            out.emplace<dynamic_chunks>(loop_setup{setup.count, setup.threads, chunks, setup.history, setup.scratch,
                                                   setup.block_weights});
            return;
        }
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

loop_plan setup_site_run(any_schedule& out, site_state& st, const schedule& spec, std::uint64_t count, int available,
                         runtime::arena& scratch, std::string_view name) {
    // Only schedules that read the site's history, and sites whose chain has a say, need
    // the site's mutex here.
    std::unique_lock lock(st.mutex, std::defer_lock);
    loop_plan plan;
    if (chain_applies(policy_scope::loop, &spec)) {
        lock.lock();
        if (st.counters.instance.empty()) st.counters.register_for(st.record);
        plan = st.chain.plan({policy_scope::loop, &spec, name, st.counters.instance}, count, available);
    } else {
        plan.run = spec;
        plan.threads = plan.available = available;
    }
    if (!lock.owns_lock() && reads_history(plan.run)) lock.lock();
    make_schedule(out, loop_setup{count, plan.threads, plan.run, st.history, scratch, plan.block_weights});
    return plan;
}

void commit_site_run(const any_schedule& s, site_state& st, const schedule& spec, std::span<const worker_record> records,
                     runtime::ticks t0, runtime::ticks t1) {
    commit_schedule(s, records, st.history);
    std::uint64_t iterations = 0;
    for (const worker_record& r : records) iterations += r.static_iterations + r.dynamic_iterations;
    // The counters first: the chain's readers see this run in their deltas.
    if (st.counters.instance.empty()) st.counters.register_for(st.record);
    count_loop(records, t0, t1, st.counters);
    st.chain.observe({records, t0, t1, iterations, st.counters.instance});
    st.stats.add_parallel(records, t0, t1, spec);
}

void commit_site_runs(site_state& st, const schedule& spec, const run_sums& runs) {
    if (st.counters.instance.empty()) st.counters.register_for(st.record);
    count_runs(runs, st.counters);
    st.stats.add_parallel_runs(runs, spec);
}

}  // namespace aloe::loop
