// The node's share of this process's threads, for parallel work that no policy chain plans:
// the task pool, whose workers run whatever is queued (loops and regions ask the node daemon
// through their chains, loop/policy_chain.hpp). coord/ installs the source (the daemon's
// client) when the library loads and a daemon may be there; with no source the share is the
// process's own count, at the cost of one relaxed load.
#pragma once

#include <atomic>

namespace aloe::runtime {

/// Answers the threads the process may run now, given what it would run alone (`own`).
/// Must be cheap (a clock read, mostly) and must not wait.
using thread_share_source = unsigned (*)(unsigned own) noexcept;

namespace thread_share_detail {
extern constinit std::atomic<thread_share_source> source;
}

/// Installs (or, with nullptr, removes) the source.
void set_thread_share_source(thread_share_source s) noexcept;

/// The threads the process may run now: `own`, or the source's answer (at most `own`, at
/// least 1).
inline unsigned thread_share(unsigned own) noexcept {
    const thread_share_source s = thread_share_detail::source.load(std::memory_order_relaxed);
    if (s == nullptr) return own;
    const unsigned share = s(own);
    return share < 1 ? 1 : share > own ? own : share;
}

}  // namespace aloe::runtime
