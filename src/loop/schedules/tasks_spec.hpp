// `tasks[,grain=g|auto]` as text. The loop itself runs on the task scheduler through the
// runner adapt/ registers (loop/task_loop.hpp); its syntax lives here, in loop/, which owns
// aloe::schedule. The grain is kept in the chunk field (0: auto).
#pragma once

#include "loop/schedules/spec_text.hpp"

#include <aloe/schedule.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace aloe::loop {

/// Parse, print, defaults and the builder (spec_text.hpp; tasks_spec.cpp).
template <>
struct kind_text<schedule_kind::tasks> {
    static constexpr std::string_view name = "tasks";
    static constexpr std::string_view keys = "grain";
    static constexpr bool bare_chunk = false;
    static void defaults(schedule& s) noexcept;
    static bool read(schedule& s, std::string_view key, std::string_view value, const spec_reader& r);
    static bool finish(const spec_reader& r);
    static std::string print(const schedule& s);
    static schedule make(std::int64_t grain);
};

}  // namespace aloe::loop
