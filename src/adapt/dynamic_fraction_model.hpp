// The model for the dynamic fraction of a hybrid static/dynamic loop (Kale's thesis, ch. 4
// §4.2 and ch. 6's model schedulers): size the dynamic part so the other threads can absorb
// one delay δ, paying q per dynamically scheduled iteration. Pure arithmetic, so the
// adaptive schedule, `aloe sim` and the tests share one definition.
//
//   fd = p·δ / (N·(t1 + q))                          (Eq. 4.4), clamped to [0, 1]
//   δ  = δ_noise + δ_app   (pessimistic: noise lands on the most loaded thread)
//      = max(δ_noise, δ_app)  (optimistic)
//   η  = δ/(p−1) + fd·N·q/p                           (Eq. 4.5: delay on the noisy node)
//   fd' = max(fd − S / ((p−1)·N·t1/p − N·q), 0)      (Eq. 4.11 with the printed min → max)
//
// Where the thesis leaves a case open, the function says what it did (`reason`), so the
// statistics can show why a loop runs the fraction it runs.
#pragma once

#include <cstdint>
#include <string_view>

namespace aloe::adapt {

/// What the probes measured for one loop site. Times in seconds.
struct loop_measures {
    int threads = 1;                 ///< p
    std::uint64_t iterations = 0;    ///< N
    double iteration_s = 0;          ///< t1: one iteration on one core
    double dequeue_s = 0;            ///< q: per dynamically scheduled iteration
    double noise_s = 0;              ///< δ_noise: expected length of one noise event
    double app_imbalance_s = 0;      ///< δ_app = t_static − t_dynamic − overhead (ch. 6)
};

/// How noise and the application's own imbalance combine into one δ.
enum class delay_combination { pessimistic, optimistic };

struct fraction_decision {
    double dynamic_fraction = 0;  ///< fd in [0, 1]
    double delay_s = 0;           ///< the δ the fraction was sized for
    std::string_view reason;      ///< "model", or which guard decided
};

/// The δ the model sizes for: the sum (pessimistic) or the larger (optimistic) of the two;
/// negative or non-finite inputs count as 0 (a loop that ran faster dynamically than
/// statically has no imbalance to absorb).
double combined_delay(const loop_measures& m, delay_combination how) noexcept;

/// Eq. 4.4 with the guards: one thread or no iterations → 0 (nothing to balance); no delay →
/// 0 (static); t1 + q not positive or not finite → the thesis's first-invocation 10%
/// (nothing measured yet); fd > 1 → 1 (a delay longer than the loop).
fraction_decision model_dynamic_fraction(const loop_measures& m, delay_combination how);

/// Eq. 4.5: the delay a noise event of `delay_s` costs the node with fraction `fd`.
/// Infinite for one thread (nobody can take the work over).
double noisy_node_delay(const loop_measures& m, double fd, double delay_s) noexcept;

/// Eq. 4.11, corrected: slack `slack_s` before the next collective lets a process use a
/// smaller fraction. When moving work to other threads saves nothing ((p−1)·t1/p ≤ q), the
/// answer is 0: dynamic scheduling cannot pay for itself on that loop.
double slack_adjusted_fraction(const loop_measures& m, double fd, double slack_s) noexcept;

/// The fraction the thesis uses before anything is measured.
inline constexpr double first_invocation_fraction = 0.1;

}  // namespace aloe::adapt
