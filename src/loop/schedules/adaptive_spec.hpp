// `adaptive[,search=race|local|nlopt|sweep][,chunk=c|auto][,delay=optimistic|pessimistic]` as
// text. The schedule itself is adapt/'s (a site policy choosing a concrete schedule per
// run); its syntax lives here, in loop/, which owns aloe::schedule and cannot include adapt/.
#pragma once

#include "loop/schedules/spec_text.hpp"

#include <aloe/schedule.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace aloe::loop {

/// Parse, print, defaults and the builder (spec_text.hpp; adaptive_spec.cpp).
template <>
struct kind_text<schedule_kind::adaptive> {
    static constexpr std::string_view name = "adaptive";
    static constexpr std::string_view keys = "search, chunk, delay";
    static constexpr bool bare_chunk = false;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    /// chunk 0: auto. search and delay are taken as given.
    static schedule make(adaptive_search search, std::int64_t chunk, delay_model delay);
};

}  // namespace aloe::loop
