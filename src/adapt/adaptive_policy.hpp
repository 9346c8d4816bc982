// The `adaptive` schedule's tuner for one loop site (Kale's thesis ch. 4–6: modelSched's
// model, uSched's search around it, vSched's staggered layout, the weighted static of ch. 3;
// put together online, per site, from the loop's own invocations).
//
// Life of a site (each step is one invocation of the loop):
//   1. probe static: run `static` twice (the first run of a site pays for cold caches; the
//      faster speaks); measure the work W (summed busy time), t1 = W/N, the static part's
//      lateness and imbalance (max/mean busy), per-thread speed.
//      Balanced (imbalance ≤ 1 + balance_tolerance): keep running `static` (state
//      converged, "balanced and quiet") and watch.
//   2. probe dynamic: run `staggered,fs=0` with the chunk sized from q and t1; then
//      δ_app = t_static − t_dynamic − overhead (overhead = chunks per thread · q). Every run
//      with dynamic chunks refines q: (summed busy − W) / chunks.
//   3. search: race (default, candidate_race.hpp) static, the model's fs = 1 − fd
//      (dynamic_fraction_model), dynamic, guided, coarse chunks (a page of doubles at
//      least) and static blocks of equal measured cost (replay), judged by confidence
//      intervals of their time per iteration, within 20 invocations; a fs fitted through
//      the static, model and dynamic means joins the re-checks after. Or uSched's local
//      search (search=local: ±0.05, the mean of 3 invocations, see median.hpp), NLopt over
//      fs and the chunk together (search=nlopt), or every fs (search=sweep, "besf").
//   4. converged: run the choice (`static` when it is fs = 1 on equal blocks); watch for
//      drift: a lasting change of the time (local search's own watch, or drift_watch), or, on
//      `static`, late static parts in `late_runs_to_reopen` of the last `late_window` runs.
//      Drift re-opens the search at step 2.
// At any step, a thread whose speed stays below slow_core_ratio of the median for
// slow_core_runs runs in a row turns on weighted blocks (weights follow measured speed);
// a converged search is re-opened then, since the best fraction changes with the weights.
//
// With a tuning memory (ALOE_TUNING, tuning_file.hpp) a site starts from what an earlier run
// of the same binary left (site_memory.hpp): a converged choice runs from the first
// invocation and is re-checked by the race's re-check slots and the drift watch; a race cut
// short by the program's end goes on where it stopped.
//
// Cost per invocation: O(threads) arithmetic under the site's mutex; the process-wide probes
// (q on the team, δ_noise by fixed-work quanta) run once, at the first adaptive loop.
#pragma once

#include "adapt/candidate_race.hpp"
#include "adapt/cost_profile.hpp"
#include "adapt/drift_watch.hpp"
#include "adapt/dynamic_fraction_model.hpp"
#include "adapt/local_search_tuner.hpp"
#include "adapt/site_memory.hpp"
#include "loop/policy_chain.hpp"

#include <aloe/schedule.hpp>
#include <aloe/stats.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace aloe::adapt {

class nlopt_search;

/// What the process-wide probes measured (adaptive_policy.cpp measures them once).
struct machine_probes {
    double dequeue_s = 0;  ///< q: one dequeue from a shared counter on the team, seconds
    double noise_s = 0;    ///< δ_noise: mean FWQ noise event on this machine, seconds
};

struct adaptive_options {
    double balance_tolerance = 0.03;  ///< max/mean busy of a balanced run
    double chunk_overhead = 0.05;     ///< a chunk's dequeue costs at most this share of its work
    int local_max_trials = 5;         ///< local search candidates (3 invocations each), so the
                                      ///< first convergence comes within 3 + 15 invocations
    int late_window = 8;              ///< static watch: runs looked back on
    int late_runs_to_reopen = 2;      ///< late runs among them that re-open the search
    double slow_core_ratio = 0.85;    ///< a thread slower than this × median speed is slow …
    int slow_core_runs = 5;           ///< … when it is so this many runs in a row (3 let noise
                                      ///< hitting one of 4 threads in 1 of 2 runs pass, 1 in 64)
    std::size_t trace_limit = 256;    ///< invocations kept in tuning_stats::steps
    int race_budget = 18;             ///< invocations a race may take (after two static probes)
    int recheck_every = 10;           ///< after a race, one invocation in this many re-checks another
};

class adaptive_policy final : public loop::site_policy {
public:
    /// `memory` (may be null) is where the site's tuning is recalled from and kept, under
    /// `site` (the policy_site's name).
    adaptive_policy(const schedule& spec, const machine_probes& probes, const adaptive_options& options = {},
                    tuning_memory* memory = nullptr, std::string site = {});
    ~adaptive_policy() override;

    // Its link in a site's chain: sets the plan's concrete schedule and block weights.
    std::string_view name() const noexcept override { return "adaptive"; }
    bool serves(const schedule* spec) const noexcept override { return spec != nullptr && *spec == spec_; }
    void plan(std::uint64_t iterations, loop::loop_plan& p) override;
    /// The run's wall time is fork to join; without them, the delta of the site's
    /// `/loop{…}/time` counter (its own reader). The per-thread facts come from the records.
    void observe(const loop::loop_outcome& o) override;
    policy_status status() const override;
    std::optional<tuning_stats> tuning() const override { return snapshot(); }

    const schedule& spec() const noexcept { return spec_; }
    /// The concrete schedule (static, hybrid or staggered) and block weights for one run.
    struct choice {
        schedule run;
        std::span<const double> block_weights;  ///< empty: equal blocks; owned until the next call
    };
    choice choose(std::uint64_t iterations, int threads);
    void observe(std::span<const loop::worker_record> records, runtime::ticks fork, runtime::ticks join);
    /// Reads the site's counters from now on (`instance`: site_counters::instance).
    void read_counters_of(std::string_view instance);
    tuning_stats snapshot() const;

    /// The chunk for a dynamic part: the smallest whose dequeue (q) costs at most
    /// `overhead` of its work (c·t1), at most a quarter of a thread's dynamic share, at
    /// least 1. Exposed for tests.
    static std::int64_t chunk_for(double dequeue_s, double iteration_s, double overhead, std::uint64_t dynamic_iterations,
                                  int threads) noexcept;
    /// The race's coarse chunk: at least four times `chunk`, and when an iteration is short
    /// enough to be streaming memory (< 50 ns), at least a page of doubles (512 on 4 KiB
    /// pages), so threads never split a page they stream; at most a quarter of a thread's
    /// share. Exposed for tests.
    static std::int64_t coarse_chunk_for(std::int64_t chunk, double iteration_s, std::uint64_t iterations, int threads,
                                         std::size_t page_bytes) noexcept;
    /// What this site's tuning would leave for the next run now.
    site_memory remember() const;

private:
    enum class phase { probe_static, probe_dynamic, searching, converged };
    struct run_facts;

    run_facts facts_of(std::span<const loop::worker_record> records) const;
    void learn(const run_facts& f);
    bool quiet(const run_facts& f) const noexcept;
    bool balanced(const run_facts& f) const noexcept;  ///< busy times within the tolerance or 5 µs
    void learn_profile(std::span<const loop::worker_record> records);
    void watch_speeds(const run_facts& f);
    void after_probe_static(const run_facts& f);
    void after_probe_dynamic(const run_facts& f);
    void start_search();
    void start_race(double dynamic_seconds);
    void race_observed(double per_iteration_s);
    void race_decided();
    void offer_fitted_fraction();
    void resume(const site_memory& m);
    void keep_memory();
    void judged_search(double seconds);
    void converge(std::string reason);
    void reopen(std::string reason);
    double dequeue_s() const noexcept;
    std::int64_t dynamic_chunk(double fs) const noexcept;

    void observe_run(std::span<const loop::worker_record> records, double seconds);

    schedule spec_;
    std::optional<aloe::counter_reader> time_reader_;  ///< `/loop{site}/time`, its own baseline
    machine_probes probes_;
    adaptive_options options_;

    phase phase_ = phase::probe_static;
    std::string reason_ = "probing: first invocation runs static";
    std::uint64_t iterations_ = 0;
    int threads_ = 0;
    std::uint64_t invocations_ = 0;
    std::uint64_t trials_ = 0;
    std::uint64_t searches_ = 0;
    std::int64_t converged_at_ = -1;
    std::uint64_t settled_at_ = 0;  // invocation of the latest convergence
    std::uint64_t reopened_ = 0;    // re-openings so far (each doubles the wait for the next)

    // What the probes found.
    double static_seconds_ = 0;
    double static_imbalance_ = 1;
    bool static_quiet_ = true;  // every static probe balanced and on time
    bool static_out_ = false;   // the first static probe was too uneven to race static
    int static_runs_ = 0;
    double iteration_s_ = 0;     // t1 = W / N
    double static_busy_s_ = 0;   // W: the least busy sum of a run without dynamic chunks
    std::vector<double> live_dequeue_s_;  // recent q estimates from dynamic parts
    std::vector<double> lateness_s_;      // recent static-part lateness of late runs
    std::vector<bool> late_;              // static watch: recent runs late or not
    double delay_app_s_ = 0;
    double delay_noise_s_ = 0;
    fraction_decision model_{};
    double model_fs_ = 1;

    // What runs now.
    schedule current_;
    double fs_ = 1;
    std::int64_t chunk_ = 0;

    // Searches (one at a time).
    std::unique_ptr<local_search_tuner> local_;
    std::unique_ptr<nlopt_search> nlopt_;
    int sweep_index_ = -1;
    std::vector<double> sweep_samples_;
    double sweep_best_seconds_ = 0;
    double sweep_best_fs_ = 1;
    drift_watch drift_;  // after nlopt/sweep

    // The race (search=race): its candidates, index for index.
    struct candidate {
        schedule run;
        double fs = 1;
        std::int64_t chunk = 0;
        bool replay = false;  // static blocks of equal cost by the measured cost profile
    };
    std::unique_ptr<candidate_race> race_;
    std::vector<candidate> candidates_;
    cost_profile profile_;                // where the work lies, from static runs' block times
    std::vector<double> replay_weights_;  // replay's split: equal cost by profile_ …
    std::size_t replay_split_runs_ = 0;   // … after this many of its observations
    std::vector<cost_profile::block_time> block_times_;  // learn_profile's scratch
    int running_ = -1;  // the candidate this invocation runs
    tuning_memory* memory_ = nullptr;
    std::string site_;
    std::uint64_t kept_at_ = 0;
    std::uint64_t recalled_invocations_ = 0;  // what the recalled memory summed up
    bool skip_sample_ = false;        // a resumed site's first invocation runs on cold caches
    double probe_static_per_it_ = 0;  // the warm static probe's time per iteration (0: none)

    // Slow core.
    bool weighted_ = false;
    std::vector<double> weights_;
    int slow_thread_ = -1;
    int slow_runs_ = 0;

    std::vector<tuning_step> steps_;
};

/// The process-wide probe results, measuring them on `t` the first time (thread-safe).
machine_probes measure_machine_once(team& t);
/// The probe results if they were measured (an adaptive loop ran), else nothing.
std::optional<machine_probes> measured_machine_probes() noexcept;

}  // namespace aloe::adapt
