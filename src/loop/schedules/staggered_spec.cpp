// `staggered,fs=f[,chunk=c][,queue=atomic|mutex]`: fs is required.
#include "loop/schedules/staggered.hpp"

namespace aloe::loop {

using staggered_text = kind_text<schedule_kind::staggered>;

void staggered_text::defaults(schedule& s) noexcept {
    s = schedule();
    s.kind_ = schedule_kind::staggered;
    s.chunk_ = 1;
}

bool staggered_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    if (key == "fs") return r.read_real(key, value, 0.0, 1.0, s.fs_);
    if (key == "queue") return r.read_word(key, value, {"atomic", "mutex"}, s.claim_);
    return r.read_int(key, value, 1, max_chunk, s.chunk_);
}

bool staggered_text::finish(const spec_reader& r) {
    return r.has_key("fs") || r.fail("staggered needs fs=<static fraction in [0, 1]>");
}

std::string staggered_text::print(const schedule& s) {
    return std::string(name) + ",fs=" + number(s.fs_) + ",chunk=" + std::to_string(s.chunk_) +
           ",queue=" + (s.claim_ == queue_claim::atomic ? "atomic" : "mutex");
}

schedule staggered_text::make(double fs, std::int64_t chunk, queue_claim claim) {
    schedule s;
    defaults(s);
    value_check check;
    check.real("fs", fs, 0.0, 1.0, s.fs_);
    check.integer("chunk", chunk, 1, max_chunk, s.chunk_);
    check.throw_if_failed([&] {
        return "staggered,fs=" + number(fs) + ",chunk=" + std::to_string(chunk) +
               (claim == queue_claim::mutex ? ",queue=mutex" : "");
    });
    // As the string it stands for: only mutex is written out, anything else is the default.
    s.claim_ = claim == queue_claim::mutex ? queue_claim::mutex : queue_claim::atomic;
    return s;
}

}  // namespace aloe::loop
