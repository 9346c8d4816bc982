#include "mpi/lending_steps.hpp"

#include "runtime/json_text.hpp"

#include <algorithm>
#include <cstdio>

namespace aloe::mpi {

void lending_steps::add(const phase_sample& s) {
    if (!step_path_) {
        // Until a path recurs: remember the paths (a set-up has few; past 64 distinct ones
        // the first of them is taken, as if it had recurred).
        if (std::find(seen_.begin(), seen_.end(), s.path) == seen_.end() && seen_.size() < 64) {
            seen_.push_back(s.path);
            return;
        }
        step_path_ = s.path;
        seen_.clear();
        seen_.shrink_to_fit();
    } else {
        open_.compute_s += std::max(0.0, s.entry_s - s.phase_start_s);
        open_.waited_s += std::max(0.0, s.end_s - s.entry_s);
        if (s.predicted_s) open_.predicted_s = std::max(open_.predicted_s, 0.0) + *s.predicted_s;
        open_.lent_core_s += s.lent_core_s;
        open_.own_threads = s.own_threads;
        ++open_.waits;
        if (s.path != *step_path_) return;
        open_.seconds = std::max(0.0, s.end_s - open_.start_s);
        open_.borrowed_core_s = std::max(0.0, s.borrowed_total_core_s - borrowed_at_open_);
        last_ = open_;
        if (steps_.size() < most_kept) steps_.push_back(open_);
        else ++dropped_;
    }
    open_ = lending_step{};
    open_.start_s = s.end_s;
    open_.own_threads = s.own_threads;
    borrowed_at_open_ = s.borrowed_total_core_s;
}

std::string lending_steps::json_members() const {
    using runtime::json_number;
    std::string j = "\"steps\": [";
    bool first = true;
    for (const lending_step& t : steps_) {
        j += first ? "\n   " : ",\n   ";
        first = false;
        j += "{\"start_s\": " + json_number(t.start_s) + ", \"seconds\": " + json_number(t.seconds) +
             ", \"compute_s\": " + json_number(t.compute_s) + ", \"waited_s\": " + json_number(t.waited_s) +
             ", \"predicted_s\": " + (t.predicted_s < 0 ? std::string("null") : json_number(t.predicted_s)) +
             ", \"own_threads\": " + std::to_string(t.own_threads) + ", \"threads_used\": " + json_number(t.threads_used()) +
             ", \"lent_core_s\": " + json_number(t.lent_core_s) + ", \"borrowed_core_s\": " + json_number(t.borrowed_core_s) +
             ", \"waits\": " + std::to_string(t.waits) + "}";
    }
    return j + (first ? "]" : "\n  ]") + ", \"steps_dropped\": " + std::to_string(dropped_);
}

std::string lending_steps::trace_events(long pid, int rank) const {
    // A track of its own: a tid no OpenMP thread of the interposer's trace takes.
    constexpr long track = 1'000'000;
    const std::string head = "{\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(track);
    std::string out = head + ",\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":\"MPI steps (rank " +
                      std::to_string(rank) + ")\"}}";
    char number[160];
    std::size_t index = 0;
    for (const lending_step& t : steps_) {
        std::snprintf(number, sizeof number, ",\"ts\":%.3f,\"dur\":%.3f", t.start_s * 1e6, t.seconds * 1e6);
        out += ",\n" + head + ",\"ph\":\"X\",\"cat\":\"mpi_step\",\"name\":\"step " + std::to_string(index++) + "\"" +
               number + ",\"args\":{\"compute_s\":" + runtime::json_number(t.compute_s) +
               ",\"waited_s\":" + runtime::json_number(t.waited_s) + ",\"predicted_s\":" +
               (t.predicted_s < 0 ? std::string("null") : runtime::json_number(t.predicted_s)) +
               ",\"own_threads\":" + std::to_string(t.own_threads) + ",\"threads_used\":" +
               runtime::json_number(t.threads_used()) + ",\"lent_core_s\":" + runtime::json_number(t.lent_core_s) +
               ",\"borrowed_core_s\":" + runtime::json_number(t.borrowed_core_s) + "}}";
        // Counters, drawn as graphs: cores lent and borrowed on average over the step.
        std::snprintf(number, sizeof number, ",\"ts\":%.3f", t.start_s * 1e6);
        const double lent = t.seconds > 0 ? t.lent_core_s / t.seconds : 0;
        const double borrowed = t.seconds > 0 ? t.borrowed_core_s / t.seconds : 0;
        out += ",\n{\"pid\":" + std::to_string(pid) + ",\"ph\":\"C\",\"name\":\"lending (rank " + std::to_string(rank) +
               ")\"" + number + ",\"args\":{\"threads used\":" + runtime::json_number(t.threads_used()) +
               ",\"cores lent\":" + runtime::json_number(lent) + ",\"cores borrowed\":" + runtime::json_number(borrowed) + "}}";
    }
    return out;
}

namespace {

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::string ms(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", s * 1e3);
    return b;
}

std::string step_row(std::size_t index, const lending_step& t) {
    char b[200];
    std::snprintf(b, sizeof b, "  %6zu %9s %9s %9s %9s %7.2f %9s %9s\n", index, ms(t.seconds).c_str(),
                  ms(t.compute_s).c_str(), ms(t.waited_s).c_str(), t.predicted_s < 0 ? "-" : ms(t.predicted_s).c_str(),
                  t.threads_used(), ms(t.lent_core_s).c_str(), ms(t.borrowed_core_s).c_str());
    return b;
}

}  // namespace

std::string lending_steps::summary_text(int rank, const char* mode) const {
    std::string out = "lending, rank " + std::to_string(rank) + " (" + mode + "): ";
    if (steps_.empty()) return out + "no step completed (no blocking call path recurred)\n";
    std::vector<double> seconds, compute, waited, predicted, used, lent, borrowed;
    for (const lending_step& t : steps_) {
        seconds.push_back(t.seconds);
        compute.push_back(t.compute_s);
        waited.push_back(t.waited_s);
        if (t.predicted_s >= 0) predicted.push_back(t.predicted_s);
        used.push_back(t.threads_used());
        lent.push_back(t.lent_core_s);
        borrowed.push_back(t.borrowed_core_s);
    }
    char b[160];
    std::snprintf(b, sizeof b, "%.2f", median_of(used));
    out += std::to_string(steps_.size() + dropped_) + " steps, " + std::to_string(steps_.back().own_threads) +
           " own threads; median step " + ms(median_of(seconds)) + " ms: compute " + ms(median_of(compute)) +
           ", waited " + ms(median_of(waited)) + " (predicted " +
           (predicted.empty() ? std::string("-") : ms(median_of(predicted))) + "), threads held " + b + ", lent " +
           ms(median_of(lent)) + " and borrowed " + ms(median_of(borrowed)) +
           " core-ms (held and borrowed: the cores the daemon granted, whether or not a thread ran there)\n";
    std::snprintf(b, sizeof b, "  %6s %9s %9s %9s %9s %7s %9s %9s   (ms; lent and borrowed in core-ms)\n", "step", "time",
                  "compute", "waited", "predicted", "threads", "lent", "borrowed");
    out += b;
    const std::size_t n = steps_.size(), shown = 3;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == shown && n > 2 * shown) {
            out += "     ... (" + std::to_string(n - 2 * shown) + " more; every step is in the --mpi-stats JSON)\n";
            i = n - shown;
        }
        out += step_row(i, steps_[i]);
    }
    return out;
}

}  // namespace aloe::mpi
