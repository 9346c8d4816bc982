// `tasklets,n=k[,fs=f][,skew=r][,locality=0|1]`: n is required; fs 0, skew 1 (uniform) and
// locality 1 by default.
#include "loop/schedules/tasklets.hpp"

namespace aloe::loop {

using tasklets_text = kind_text<schedule_kind::tasklets>;

void tasklets_text::defaults(schedule& s) noexcept {
    s = schedule();
    s.kind_ = schedule_kind::tasklets;
    s.chunk_ = 1;
    s.fs_ = 0.0;
}

bool tasklets_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    if (key == "n") return r.read_int(key, value, 1, max_tasklets, s.tasklets_);
    if (key == "fs") return r.read_real(key, value, 0.0, 1.0, s.fs_);
    if (key == "skew") return r.read_real(key, value, 1.0, max_skew, s.skew_);
    return r.read_bool(key, value, s.locality_);
}

bool tasklets_text::finish(const spec_reader& r) {
    return r.has_key("n") || r.fail("tasklets needs n=<tasklet count>");
}

std::string tasklets_text::print(const schedule& s) {
    return std::string(name) + ",n=" + std::to_string(s.tasklets_) + ",fs=" + number(s.fs_) +
           ",skew=" + number(s.skew_) + ",locality=" + (s.locality_ ? "1" : "0");
}

schedule tasklets_text::make(std::int64_t count, double fs, double skew, bool locality) {
    schedule s;
    defaults(s);
    value_check check;
    check.integer("n", count, 1, max_tasklets, s.tasklets_);
    check.real("fs", fs, 0.0, 1.0, s.fs_);
    check.real("skew", skew, 1.0, max_skew, s.skew_);
    check.throw_if_failed([&] {
        return "tasklets,n=" + std::to_string(count) + ",fs=" + number(fs) + ",skew=" + number(skew) +
               ",locality=" + (locality ? "1" : "0");
    });
    s.locality_ = locality;
    return s;
}

}  // namespace aloe::loop
