// The sites of an OpenMP program as the interposer sees them: each parallel region and each
// worksharing loop is identified by the return address of its call into libgomp, named
// "module+0xOFFSET" (the address as the module's symbols see it), and carries its counters.
//
// Lookup is lock-free in the steady state (an open-addressed table of addresses); a new site
// is created under a mutex, with its rule chosen once (resolving its source line first when
// a rule names source lines).
#pragma once

#include "omp/gomp_abi.hpp"
#include "omp/guest_payoff.hpp"
#include "omp/loop_rules.hpp"
#include "omp/source_lines.hpp"
#include "loop/site_registry.hpp"
#include "runtime/clock.hpp"
#include "runtime/counters.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace aloe::omp {

struct team_region;  // team_region.hpp

enum class site_kind : std::uint8_t { region, loop };

struct omp_site {
    site_kind kind = site_kind::region;
    const void* address = nullptr;
    code_address code;
    std::string name;    ///< "module+0xOFFSET"
    std::string source;  ///< "file:line (function)" when known (rules with lines, or at exit)
    const loop_rule* rule = nullptr;  ///< loops: the rules file's line for this site, if any

    // Loops. What the program asked for, last seen (for the summary: asked_schedule_text()).
    // Every thread notes them at every start, so they are written only when they change: the
    // steady state reads, and the line they share with the counters stays shared.
    std::atomic<loop_form> form{loop_form::dynamic};
    std::atomic<long> program_chunk{0};           ///< the entry point's chunk (an ull one saturated)
    std::atomic<std::uint32_t> generic_sched{0};  ///< generic: GOMP_loop_start's sched, flag kept
    std::atomic<std::uint32_t> runtime_kind{0};   ///< loops reading run-sched-var: omp_get_schedule's kind, flag kept
    std::atomic<int> runtime_chunk{0};            ///< and its chunk
    loop::site_state* aloe_site = nullptr;  ///< set at creation; aloe's history and statistics
    /// The last decision to take a loop here and the request it answered (loop_takeover.cpp:
    /// decide): a steady loop is decided again by comparing three words. A seqlock (`seq`
    /// odd while a thread writes it): every thread reads it without a lock.
    struct decision_cache {
        std::atomic<std::uint32_t> seq{0};
        std::atomic<std::uint64_t> form_and_flags{~std::uint64_t{0}};  ///< no request matches the first
        std::atomic<long> chunk{0};
        std::atomic<std::uint64_t> runtime{0};
        std::atomic<const loop_choice*> choice{nullptr};
        std::atomic<long> kind{0};
        std::atomic<long> run_chunk{0};
    } decided;
    // Its counts live in the counter registry (runtime/counters.hpp), as the instance named
    // after the site: /loop{module+0xOFFSET}/taken-runs, …; /region{module+0xOFFSET}/runs, ….
    // Every thread adds to its own block; the exit report reads the totals.
    runtime::counter_handle taken;                 ///< invocations aloe ran
    runtime::counter_handle forwarded;             ///< invocations handed to libgomp
    runtime::counter_handle forwarded_iterations;
    runtime::counter_handle forwarded_time;        ///< ns, thread 0's start-to-end
    std::atomic<const char*> forward_reason{nullptr};
    std::atomic<const char*> note{nullptr};  ///< why a taken loop ran its own schedule instead

    // Regions (counters as above), and the team size as a gauge.
    runtime::counter_handle invocations;
    runtime::counter_handle region_time;  ///< ns, fork to join
    runtime::counter_handle imbalance;    ///< max/mean busy time of each run, summed (millionths)
    std::atomic<int> threads_last{0};
    std::atomic<int> threads_max{0};
    guest_payoff guests;  ///< whether threads on borrowed cores make its regions faster (issue 19)
    std::atomic<const char*> non_malleable{nullptr};  ///< why its thread count is the program's
    std::mutex chain_mutex;
    loop::policy_chain region_chain;  ///< what plans its thread count (region_threads())
    /// A region object this site's last execution returned (team_region.hpp): the next one
    /// takes it with one exchange instead of the pool's mutex. Null while one is running.
    std::atomic<team_region*> spare_region{nullptr};
};

/// The site of the call whose return address is `address`; created on first use.
omp_site& site_at(const void* address, site_kind kind);

/// Every site of `kind`, in order of first use (for the exit report).
std::vector<omp_site*> all_sites(site_kind kind);

using runtime::main_program_path;

/// Around fork() (fork_hooks.cpp): the tables' creation mutexes, so that a child never finds
/// one held by a thread that was creating a site (and resolving its source line) at the fork.
void lock_site_tables_for_fork() noexcept;
void unlock_site_tables_after_fork() noexcept;
/// In the child: what is not a counter back to 0 (the registry zeroes the counts), so its
/// report holds what it ran itself.
void forget_site_counts_in_child() noexcept;

/// Whether a program thread called omp_set_num_threads (then regions keep libgomp's count).
extern std::atomic<const char*> program_sets_threads;

}  // namespace aloe::omp
