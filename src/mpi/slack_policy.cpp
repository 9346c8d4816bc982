#include "mpi/slack_policy.hpp"

#include "adapt/adaptive_policy.hpp"
#include "adapt/dynamic_fraction_model.hpp"
#include "mpi/call_table.hpp"
#include "mpi/slack_board.hpp"
#include "runtime/clock.hpp"
#include "runtime/code_address.hpp"
#include "runtime/plain_text.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace aloe::mpi {

namespace {

constexpr double unprobed_dequeue_s = 60e-9;  // q per dequeue when no adaptive loop probed it

class slack_policy final : public loop::site_policy {
public:
    explicit slack_policy(const schedule& spec) : spec_(spec) {}

    std::string_view name() const noexcept override { return "slack"; }
    bool serves(const schedule* spec) const noexcept override { return spec != nullptr && *spec == spec_; }

    void plan(std::uint64_t iterations, loop::loop_plan& p) override {
        ++stats_.planned;
        slack_board& board = process_board();
        // The call that followed the previous invocation (the path a site meets is stable; the
        // last one found is kept when the ring has moved on).
        double share = 1;
        if (gap_ != none) {
            if (const std::optional<std::size_t> row = board.row_of(gap_)) following_ = *row;
            const double loops = board.loops_in_gap(gap_);
            if (loops > last_s_ && last_s_ > 0) share = last_s_ / loops;
        }
        if (following_ != none && board.known(following_)) {
            if (predicted_pending_) {  // what the call after the previous invocation then had
                actual_sum_ += board.last_slack_s(following_) * share;
                stats_.actual_last_s = board.last_slack_s(following_) * share;
                ++actuals_;
            }
            predicted_ = board.predicted_s(following_) * share;
        } else {
            predicted_ = 0;
        }
        const double fd = dynamic_fraction_of(p.run);
        double after = fd;
        if (fd < 0) {
            stats_.guard = "the schedule has no dynamic fraction";
        } else if (p.measuring) {
            stats_.guard = "adaptive is measuring: unchanged";
        } else if (following_ == none) {
            stats_.guard = "no MPI call has followed the loop yet";
        } else if (!(iteration_s_ > 0)) {
            stats_.guard = "t1 not measured yet";
        } else if (predicted_ <= 0) {
            stats_.guard = "no slack predicted (the critical path)";
        } else {
            adapt::loop_measures m;
            m.threads = p.threads;
            m.iterations = iterations;
            m.iteration_s = iteration_s_;
            const std::optional<adapt::machine_probes> probes = adapt::measured_machine_probes();
            const double per_dequeue = probes && probes->dequeue_s > 0 ? probes->dequeue_s : unprobed_dequeue_s;
            m.dequeue_s = per_dequeue / static_cast<double>(std::max<std::int64_t>(p.run.chunk(), 1));
            after = adapt::slack_adjusted_fraction(m, fd, predicted_);
            stats_.guard = after == 0 && fd > 0 ? "Eq. 4.11: the slack covers the dynamic part"
                                                : "Eq. 4.11: S = " + runtime::fixed(predicted_ * 1e6, 1) + " us";
            if (after < fd) {
                p.run = with_dynamic_fraction(p.run, after);
                ++stats_.lowered;
            }
        }
        predicted_pending_ = following_ != none;
        if (fd >= 0) {
            stats_.fd_before_last = fd;
            stats_.fd_after_last = after;
            fd_before_sum_ += fd;
            fd_after_sum_ += after;
            ++fractions_;
        }
        stats_.predicted_last_s = predicted_;
        predicted_sum_ += predicted_;
        choice_ = p.run.to_string();
        threads_ = p.threads;
    }

    void observe(const loop::loop_outcome& outcome) override {
        last_s_ = runtime::ticks_to_seconds(outcome.join - outcome.fork);
        // t1: the least static time per iteration any thread has shown (the thesis's minimum
        // static-section time over invocations, per iteration).
        for (const loop::worker_record& r : outcome.records)
            if (r.static_iterations > 0 && r.static_end > r.start)
                iteration_s_ = std::min(iteration_s_ > 0 ? iteration_s_ : std::numeric_limits<double>::infinity(),
                                        runtime::ticks_to_seconds(r.static_end - r.start) /
                                            static_cast<double>(r.static_iterations));
        if (!(iteration_s_ > 0) && outcome.iterations > 0 && !outcome.records.empty())  // all dynamic so far
            iteration_s_ = last_s_ * static_cast<double>(outcome.records.size()) / static_cast<double>(outcome.iterations);
        slack_board& board = process_board();
        gap_ = board.next_ordinal();
        board.loop_ran(gap_, last_s_);
    }

    policy_status status() const override {
        policy_status s;
        s.name = std::string(name());
        s.state = stats_.lowered > 0 ? policy_state::acting : policy_state::idle;
        s.choice = choice_;
        s.threads = threads_;
        slack_stats out = stats_;
        if (following_ != none) {
            const call_path path = process_calls().path_of(following_);
            out.call = std::string(call_name(path.call)) +
                       (path.site != nullptr ? " at " + runtime::code_site_name(runtime::locate_code(path.site)) : "");
        }
        if (fractions_ > 0) {
            out.fd_before_mean = fd_before_sum_ / static_cast<double>(fractions_);
            out.fd_after_mean = fd_after_sum_ / static_cast<double>(fractions_);
        }
        if (stats_.planned > 0) out.predicted_mean_s = predicted_sum_ / static_cast<double>(stats_.planned);
        if (actuals_ > 0) out.actual_mean_s = actual_sum_ / static_cast<double>(actuals_);
        s.slack = out;
        return s;
    }

private:
    static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();

    schedule spec_;
    std::uint64_t gap_ = none;        // the ordinal of the call after the previous invocation
    std::size_t following_ = none;    // that call's row
    double last_s_ = 0;               // the previous invocation's length
    double iteration_s_ = 0;          // t1
    double predicted_ = 0;
    bool predicted_pending_ = false;
    double predicted_sum_ = 0, actual_sum_ = 0, fd_before_sum_ = 0, fd_after_sum_ = 0;
    std::uint64_t actuals_ = 0, fractions_ = 0;
    slack_stats stats_;
    std::string choice_;
    int threads_ = 0;
};

bool applies(const loop::policy_site& site) noexcept {
    if (site.scope != loop::policy_scope::loop || site.spec == nullptr) return false;
    const slack_mode m = site.spec->slack();
    return m == slack_mode::on || (m == slack_mode::automatic && site.spec->kind() == schedule_kind::adaptive);
}

std::unique_ptr<loop::site_policy> make(const loop::policy_site& site) {
    return std::make_unique<slack_policy>(*site.spec);
}

constexpr loop::policy_kind kind{"slack", &applies, &make, nullptr, /*adaptive_only=*/true, /*slack_sites=*/true};

struct install_at_load {
    install_at_load() { loop::register_policy_kind(&kind); }
} const installer;

}  // namespace

const loop::policy_kind& slack_policy_kind() noexcept { return kind; }

double dynamic_fraction_of(const schedule& run) noexcept {
    switch (run.kind()) {
        case schedule_kind::hybrid:
        case schedule_kind::staggered:
        case schedule_kind::weighted:
        case schedule_kind::tasklets: return 1 - run.static_fraction();
        case schedule_kind::dynamic: return 1;
        default: return -1;
    }
}

schedule with_dynamic_fraction(const schedule& run, double fd) {
    const double fs = std::clamp(1 - fd, 0.0, 1.0);
    switch (run.kind()) {
        case schedule_kind::hybrid: return schedule::hybrid(fs, run.chunk());
        case schedule_kind::dynamic: return schedule::hybrid(fs, run.chunk());
        case schedule_kind::staggered: return schedule::staggered(fs, run.chunk(), run.claim());
        case schedule_kind::weighted: return schedule::weighted(fs, run.chunk());
        case schedule_kind::tasklets: return schedule::tasklets(run.tasklet_count(), fs, run.skew(), run.locality());
        default: return run;
    }
}

}  // namespace aloe::mpi
