// A constant background load: a child process that holds one CPU for a duty cycle (spins for
// duty × period, sleeps the rest) for as long as the workload runs, like a second program
// sharing the node. Normal priority: the kernel shares the CPU with the worker there.
#pragma once

#include <string>
#include <sys/types.h>

namespace aloe_apps {

struct background_options {
    int cpu = 0;
    double duty = 0.5;          // (0, 1]
    double period_us = 10000;   // [100, 1e6]
};

/// Parses CPU:DUTY[:PERIOD_US]; throws std::invalid_argument naming the bad part.
background_options parse_background(const std::string& text);

class background_load {
public:
    /// Forks the child (call before starting threads: the child runs only async-signal-safe
    /// code). The child dies with its parent (PR_SET_PDEATHSIG), so nothing outlives a crash.
    explicit background_load(const background_options& options);
    ~background_load();  // kills and reaps the child
    background_load(const background_load&) = delete;
    background_load& operator=(const background_load&) = delete;

    const background_options& options() const noexcept { return options_; }

private:
    background_options options_;
    pid_t child_ = -1;
};

}  // namespace aloe_apps
