#include "background_load.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace aloe_apps {

namespace {
bool parse_number(const std::string& s, double& out) {
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size();
}
}  // namespace

background_options parse_background(const std::string& text) {
    const auto bad = [&](const std::string& why) {
        return std::invalid_argument("--background '" + text + "': " + why + " (expected CPU:DUTY[:PERIOD_US])");
    };
    const std::size_t a = text.find(':');
    if (a == std::string::npos) throw bad("missing ':DUTY'");
    const std::size_t b = text.find(':', a + 1);
    const std::string cpu = text.substr(0, a);
    const std::string duty = text.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
    background_options o;
    double x = 0;
    if (!parse_number(cpu, x) || x < 0 || x != static_cast<double>(static_cast<int>(x)))
        throw bad("CPU '" + cpu + "' is not a CPU number");
    o.cpu = static_cast<int>(x);
    if (!parse_number(duty, o.duty) || !(o.duty > 0 && o.duty <= 1)) throw bad("DUTY '" + duty + "' is not in (0, 1]");
    if (b != std::string::npos) {
        const std::string period = text.substr(b + 1);
        if (!parse_number(period, o.period_us) || !(o.period_us >= 100 && o.period_us <= 1e6))
            throw bad("PERIOD_US '" + period + "' is not in [100, 1000000]");
    }
    return o;
}

namespace {

std::int64_t now_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The child's whole life: only async-signal-safe calls (we forked a threaded process).
[[noreturn]] void hold_cpu(const background_options& o, pid_t parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);  // the parent died before prctl took effect
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(3);
    const auto period = static_cast<std::int64_t>(o.period_us * 1e3);
    const auto busy = static_cast<std::int64_t>(o.duty * static_cast<double>(period));
    std::int64_t start = now_ns();
    for (;;) {
        while (now_ns() - start < busy) {
        }
        start += period;
        const timespec wake{static_cast<time_t>(start / 1000000000), static_cast<long>(start % 1000000000)};
        if (busy < period) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr);
    }
}

}  // namespace

background_load::background_load(const background_options& options) : options_(options) {
    const pid_t parent = getpid();
    child_ = fork();
    if (child_ < 0) throw std::runtime_error(std::string("--background: fork failed: ") + std::strerror(errno));
    if (child_ == 0) hold_cpu(options_, parent);
}

background_load::~background_load() {
    if (child_ > 0) {
        kill(child_, SIGKILL);
        int status = 0;
        while (waitpid(child_, &status, 0) < 0 && errno == EINTR) {
        }
    }
}

}  // namespace aloe_apps
