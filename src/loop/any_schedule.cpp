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

}  // namespace aloe::loop
