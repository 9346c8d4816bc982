#include "adapt/candidate_race.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <limits>
#include <utility>

namespace aloe::adapt {

void running_stats::add(double x) noexcept {
    ++n;
    const double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
    least = n == 1 ? x : std::min(least, x);
}

double running_stats::half_width() const noexcept {
    if (n < 2) return std::numeric_limits<double>::infinity();
    return student_t95(n - 1) * std::sqrt(variance() / static_cast<double>(n));
}

double student_t95(std::uint64_t dof) noexcept {
    // One-sided 95% quantiles of Student's t, 1 to 30 degrees of freedom.
    static constexpr std::array<double, 30> t{6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,
                                              1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725,
                                              1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697};
    if (dof == 0) return std::numeric_limits<double>::infinity();
    if (dof <= t.size()) return t[dof - 1];
    return dof <= 120 ? 1.671 : 1.645;  // 60 and ∞ degrees of freedom
}

candidate_race::candidate_race(std::vector<std::string> names, race_options options) : options_(options) {
    for (std::string& n : names)
        if (find(n) < 0) entries_.push_back({std::move(n), {}, true, false});
    if (entries_.size() == 1) {
        verdict_ = verdict::separated;
        winner_ = 0;
    }
}

int candidate_race::find(const std::string& name) const noexcept {
    for (std::size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].name == name) return static_cast<int>(i);
    return -1;
}

int candidate_race::to_run() noexcept {
    if (!decided()) {
        // Fewest samples first: round robin that counts samples carried over or taken by
        // the probes; among those, one drawn at random, so that noise with a period (another
        // program's time slices) does not fall on the same candidate every round.
        std::uint64_t fewest = UINT64_MAX;
        int ties = 0;
        for (const entry& e : entries_)
            if (e.in) {
                if (e.stats.n < fewest) fewest = e.stats.n, ties = 0;
                if (e.stats.n == fewest) ++ties;
            }
        if (ties == 0) return -1;
        // xorshift64: a fixed seed, so a race is reproducible for given times.
        draw_ ^= draw_ << 13;
        draw_ ^= draw_ >> 7;
        draw_ ^= draw_ << 17;
        int k = static_cast<int>(draw_ % static_cast<std::uint64_t>(ties));
        for (std::size_t i = 0; i < entries_.size(); ++i)
            if (entries_[i].in && entries_[i].stats.n == fewest && k-- == 0) return static_cast<int>(i);
        return -1;
    }
    // Not separated and still wide (the winner's interval beyond ±5%): for the first 100
    // invocations, re-check three times as often, so the samples come where the spread needs
    // them. Then the re-checks thin out as the choice holds: every recheck_every × (1 +
    // invocations / 200), at most ten times as far apart (a loop run thousands of times pays
    // at most a tenth of a percent per percent a runner-up is slower).
    if (options_.recheck_every <= 0) return winner_;
    ++since_end_;
    const running_stats& w = entries_[static_cast<std::size_t>(winner_)].stats;
    const bool wide = since_end_ <= 100 && verdict_ == verdict::best_mean &&
                      !(half_width(w, pooled_relative_variance()) <= 0.05 * w.mean);
    const std::uint64_t every =
        wide ? static_cast<std::uint64_t>(std::max(2, options_.recheck_every / 3))
             : static_cast<std::uint64_t>(options_.recheck_every) * std::min<std::uint64_t>(1 + since_end_ / 200, 10);
    if (since_end_ % every != 0) return winner_;
    // A re-check slot: a late entrant short of samples first, else the others in, in turn.
    for (std::size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].in && entries_[i].late && entries_[i].stats.n < 3) return static_cast<int>(i);
    for (std::size_t k = 0; k < entries_.size(); ++k) {
        const std::size_t i = (recheck_turn_ + k) % entries_.size();
        if (entries_[i].in && static_cast<int>(i) != winner_) {
            recheck_turn_ = i + 1;
            return static_cast<int>(i);
        }
    }
    return winner_;
}

int candidate_race::add(const std::string& name) {
    if (const int i = find(name); i >= 0) return i;
    entries_.push_back({name, {}, true, decided()});
    return static_cast<int>(entries_.size()) - 1;
}

int candidate_race::best_in() const noexcept {
    int best = -1;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        const entry& e = entries_[i];
        if (!e.in || e.stats.n == 0) continue;
        if (best < 0 || e.stats.mean < entries_[static_cast<std::size_t>(best)].stats.mean) best = static_cast<int>(i);
    }
    return best;
}

double candidate_race::pooled_relative_variance() const noexcept {
    // Noise is the machine's more than the candidate's: the squared coefficient of variation
    // pooled over every candidate's samples (weighted by degrees of freedom).
    double sum = 0, dof = 0;
    for (const entry& e : entries_) {
        if (e.stats.n < 2 || e.stats.mean <= 0) continue;
        sum += e.stats.m2 / (e.stats.mean * e.stats.mean);
        dof += static_cast<double>(e.stats.n - 1);
    }
    return dof > 0 ? sum / dof : 0.0;
}

double candidate_race::half_width(const running_stats& s, double pooled) const noexcept {
    // Two quiet samples of a candidate have no spread; the noise that hit the others' will
    // hit it too, so its variance is at least the pooled one.
    if (s.n < 2) return std::numeric_limits<double>::infinity();
    const double variance = std::max(s.variance(), pooled * s.mean * s.mean);
    return student_t95(s.n - 1) * std::sqrt(variance / static_cast<double>(s.n));
}

void candidate_race::eliminate() {
    // The best is the lowest mean among those with a variance to judge by.
    int b = -1;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        const entry& e = entries_[i];
        if (e.in && e.stats.n >= 2 && (b < 0 || e.stats.mean < entries_[static_cast<std::size_t>(b)].stats.mean))
            b = static_cast<int>(i);
    }
    // Gross gaps first, before any interval is narrow: exploring a candidate far slower
    // costs a whole invocation each time, and a program whose loop runs 20 times cannot
    // afford many (issue 14's first matrix: static, 2× slower on mandelbrot, ran 7 of 22
    // invocations and cost 25%). Out: a least time above (1 + gross_gap) × the best least
    // time, both with two samples. Least times, because warming up (the first invocations of
    // spmv take 1.5× the later ones) and noise only add time: with one sample, or with
    // means, a candidate tried first looked worst and the race kept the one tried last.
    int any = -1;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        const entry& e = entries_[i];
        if (e.in && e.stats.n >= 2 && (any < 0 || e.stats.least < entries_[static_cast<std::size_t>(any)].stats.least))
            any = static_cast<int>(i);
    }
    if (any >= 0 && options_.gross_gap > 0) {
        const double least = entries_[static_cast<std::size_t>(any)].stats.least;
        for (entry& e : entries_)
            if (e.in && e.stats.n >= 2 && e.stats.least > (1 + options_.gross_gap) * least) e.in = false;
    }
    if (b < 0 || !entries_[static_cast<std::size_t>(b)].in) return;
    const double pooled = pooled_relative_variance();
    const running_stats& best = entries_[static_cast<std::size_t>(b)].stats;
    const double best_high = best.mean + half_width(best, pooled);
    // Three samples at least before a candidate is dropped: two can both be quiet, or both hit.
    for (entry& e : entries_)
        if (e.in && e.stats.n >= 3 && &e.stats != &best && e.stats.mean - half_width(e.stats, pooled) > best_high)
            e.in = false;
}

void candidate_race::finish() {
    winner_ = best_in();
    const auto in = std::count_if(entries_.begin(), entries_.end(), [](const entry& e) { return e.in; });
    verdict_ = in <= 1 ? verdict::separated : verdict::best_mean;
}

void candidate_race::observe(int index, double per_iteration_s) {
    if (index < 0 || static_cast<std::size_t>(index) >= entries_.size() || !std::isfinite(per_iteration_s) ||
        per_iteration_s < 0)
        return;
    entries_[static_cast<std::size_t>(index)].stats.add(per_iteration_s);
    if (!decided()) {
        ++spent_;
        eliminate();
        const auto in = std::count_if(entries_.begin(), entries_.end(), [](const entry& e) { return e.in; });
        if (in <= 1 || spent_ >= options_.budget) finish();
        return;
    }
    // After the race: the best mean among those with three samples or more leads (a
    // re-checked candidate that proves faster takes over); one that proves slower drops out
    // of the re-check turns.
    eliminate();
    int lead = -1;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        const entry& e = entries_[i];
        if (e.in && e.stats.n >= 3 && (lead < 0 || e.stats.mean < entries_[static_cast<std::size_t>(lead)].stats.mean))
            lead = static_cast<int>(i);
    }
    if (lead < 0 && !entries_[static_cast<std::size_t>(winner_)].in) lead = best_in();
    if (lead >= 0 && lead != winner_) {
        winner_ = lead;
        winner_changed_ = true;
    }
}

bool candidate_race::take_winner_changed() noexcept { return std::exchange(winner_changed_, false); }

std::vector<candidate_memory> candidate_race::remember() const {
    std::vector<candidate_memory> m;
    m.reserve(entries_.size());
    for (const entry& e : entries_) m.push_back({e.name, false, e.stats.n, e.stats.mean, e.stats.m2, !e.in});
    return m;
}

void candidate_race::recall(const std::vector<candidate_memory>& memory, bool was_decided, const std::string& winner) {
    for (const candidate_memory& c : memory) {
        if (c.samples == 0 || !std::isfinite(c.mean_s) || !std::isfinite(c.m2) || c.mean_s < 0 || c.m2 < 0) continue;
        int i = find(c.schedule);
        if (i < 0) {
            entries_.push_back({c.schedule, {}, true, false});
            i = static_cast<int>(entries_.size()) - 1;
        }
        // Chan et al.'s pairwise combination of two running means and variances.
        running_stats& s = entries_[static_cast<std::size_t>(i)].stats;
        const double na = static_cast<double>(s.n), nb = static_cast<double>(c.samples), n = na + nb;
        const double delta = c.mean_s - s.mean;
        s.m2 += c.m2 + delta * delta * na * nb / n;
        s.mean += delta * nb / n;
        s.least = s.n == 0 ? c.mean_s : std::min(s.least, c.mean_s);
        s.n += c.samples;
        if (c.out) entries_[static_cast<std::size_t>(i)].in = false;
        if (!decided()) spent_ += static_cast<int>(std::min<std::uint64_t>(c.samples, 1u << 20));
    }
    eliminate();
    const int w = find(winner);
    if (was_decided && w >= 0) {
        entries_[static_cast<std::size_t>(w)].in = true;
        winner_ = w;
        const auto in = std::count_if(entries_.begin(), entries_.end(), [](const entry& e) { return e.in; });
        verdict_ = in <= 1 ? verdict::separated : verdict::best_mean;
    } else if (!decided() && spent_ >= options_.budget) {
        finish();
    }
}

}  // namespace aloe::adapt
