// `adaptive[,search=…][,chunk=c|auto][,delay=…]`: chunk auto (0) by default.
#include "loop/schedules/adaptive_spec.hpp"

#include <array>

namespace aloe::loop {

using adaptive_text = kind_text<schedule_kind::adaptive>;

void adaptive_text::defaults(schedule& s) noexcept {
    s = schedule();
    s.kind_ = schedule_kind::adaptive;
}

bool adaptive_text::read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r) {
    if (key == "search") return r.read_word(key, value, {"local", "nlopt", "sweep", "race"}, s.search_);
    if (key == "delay") return r.read_word(key, value, {"optimistic", "pessimistic"}, s.delay_);
    if (lower(value) == "auto") {
        s.chunk_ = 0;
        return true;
    }
    return r.read_int(key, value, 1, max_chunk, s.chunk_);
}

bool adaptive_text::finish(const spec_reader&) { return true; }

std::string adaptive_text::print(const schedule& s) {
    constexpr std::array<std::string_view, 4> searches{"local", "nlopt", "sweep", "race"};
    return std::string(name) + ",search=" + std::string(searches[static_cast<std::size_t>(s.search_)]) +
           ",chunk=" + (s.chunk_ == 0 ? std::string("auto") : std::to_string(s.chunk_)) +
           ",delay=" + (s.delay_ == delay_model::optimistic ? "optimistic" : "pessimistic");
}

schedule adaptive_text::make(adaptive_search search, std::int64_t chunk, delay_model delay) {
    schedule s;
    defaults(s);
    if (chunk != 0) {
        value_check check;
        check.integer("chunk", chunk, 1, max_chunk, s.chunk_);
        check.throw_if_failed([&] { return "adaptive,chunk=" + std::to_string(chunk); });
    }
    s.search_ = search;
    s.delay_ = delay;
    return s;
}

}  // namespace aloe::loop
