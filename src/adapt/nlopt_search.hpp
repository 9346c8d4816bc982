// Online search over several knobs of one loop site at once, with one of NLopt's local
// derivative-free algorithms (Subplex by default). Like local_search_tuner it is driven by
// the loop itself: point_to_run() says which knob values the next invocation should use,
// observe() takes how long that invocation took, and each point is judged by the median of
// samples_per_point invocations, so one noise event does not steer the optimiser.
//
// NLopt owns the control flow (nlopt_optimize calls the objective), the loop owns it too (it
// decides when the next invocation runs). So the optimiser runs on its own thread, and its
// objective posts the point it wants and blocks until the loop side hands back the median.
// observe() waits for that handshake to finish, so when it returns point_to_run() already
// names the next point: the search is a deterministic function of the observed times.
#pragma once

#include <nlopt.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace aloe::adapt {

struct knob_range {
    std::string name;
    double low = 0, high = 1;
};

struct nlopt_search_options {
    int samples_per_point = 3;        ///< invocations per point; their median is the objective
    int max_evaluations = 12;         ///< points the optimiser may ask for, then settle on the best
    double relative_tolerance = 0.02; ///< stop when the objective improves less than this (ftol_rel)
    double initial_step = 0.25;       ///< first step, as a fraction of each knob's range
    nlopt_algorithm algorithm = NLOPT_LN_SBPLX;  ///< a local derivative-free one (NLOPT_LN_*)
};

class nlopt_search {
public:
    /// Starts the optimiser at `start` (one value per knob, clamped into its range). Throws
    /// std::invalid_argument naming the problem: no knobs, a knob with low >= high, a start of
    /// the wrong size or not finite, samples or evaluations < 1, a tolerance < 0, a step not in
    /// (0, 1], or an algorithm that is not a local derivative-free one that keeps to bounds.
    /// (LN_BOBYQA also needs initial_step <= 0.5; with more it settles at once, its reason
    /// naming NLopt's INVALID_ARGS.)
    nlopt_search(std::vector<knob_range> knobs, std::vector<double> start, const nlopt_search_options& options = {});
    /// Stops the optimiser thread and joins it, also in the middle of a point.
    ~nlopt_search();
    nlopt_search(const nlopt_search&) = delete;
    nlopt_search& operator=(const nlopt_search&) = delete;

    /// The knob values the next invocation should run with (the best point once done).
    std::span<const double> point_to_run() const noexcept { return done_ ? best_ : current_; }
    /// One invocation's time at point_to_run(); non-finite or negative times are ignored, and
    /// so is everything once done (re-searching after a regime change is the caller's call).
    void observe(double seconds);

    bool done() const noexcept { return done_; }
    std::span<const knob_range> knobs() const noexcept { return knobs_; }
    std::span<const double> best_point() const noexcept { return best_; }
    /// The median at best_point(); +inf before any point is judged.
    double best_seconds() const noexcept { return best_seconds_; }
    int evaluations() const noexcept { return evaluations_; }  ///< points judged so far
    /// "searching", "converged: tolerance reached", "evaluation budget spent", "stopped", or
    /// "NLopt failed: <code>[ (message)]".
    std::string_view reason() const noexcept { return reason_; }

private:
    struct opt_deleter {
        void operator()(nlopt_opt opt) const noexcept;
    };
    static double objective(unsigned n, const double* x, double* grad, void* self) noexcept;
    void optimise() noexcept;
    void stop() noexcept;
    void take_handshake();  // under mutex_, once the optimiser has posted a point or returned
    void settle(nlopt_result result, bool budget_stop, std::string_view errmsg);

    // Written by the caller's thread only; the optimiser thread reads just knobs_ and options_,
    // which do not change after construction.
    std::vector<knob_range> knobs_;
    nlopt_search_options options_;
    std::vector<double> current_, best_;
    double best_seconds_;
    std::vector<double> samples_;
    int evaluations_ = 0;
    bool done_ = false;
    std::string reason_ = "searching";
    unsigned long long seen_request_ = 0;

    // The mailbox between the two threads, under mutex_.
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<double> asked_;           ///< the point the optimiser waits on
    unsigned long long request_ = 0;      ///< how many points it has posted
    double answer_ = 0;
    bool answered_ = false;
    bool give_up_ = false;                ///< the destructor wants the optimiser to stop
    bool finished_ = false;               ///< nlopt_optimize returned
    nlopt_result result_ = NLOPT_SUCCESS;
    bool budget_stop_ = false;            ///< it was stopped for asking past max_evaluations
    std::string errmsg_;

    // The optimiser thread's own: the handle (configured before the thread starts, destroyed
    // after the join), its iterate, and the value it returns when told to give up.
    std::unique_ptr<nlopt_opt_s, opt_deleter> opt_;
    std::vector<double> x_;
    double last_answer_;
    int posted_ = 0;
    std::thread thread_;
};

}  // namespace aloe::adapt
