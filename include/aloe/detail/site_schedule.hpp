// Internal: do not include directly; use <aloe/parallel_for.hpp> or <aloe/loop_handle.hpp>.
//
// A schedule given as text at a loop's call site, parsed once per site and thread: the
// overloads of parallel_for and loop_handle that take text use it, so a literal such as
// "dynamic,chunk=4" is not converted to a schedule (parsed) at every call.
#pragma once

#ifndef ALOE_DETAIL_ALLOWED
#error "aloe/detail/ headers are internal: include <aloe/aloe.hpp> instead"
#endif

#include <aloe/export.h>
#include <aloe/loop_site.hpp>
#include <aloe/schedule.hpp>

#include <string_view>
#include <type_traits>

namespace aloe::detail {

/// The schedule `text` names, parsed once per loop site and thread and remembered until the
/// text at that site changes (src/loop/schedules/spec_cache.hpp); throws aloe::error as
/// schedule(text) does, at every call with a bad text.
ALOE_API schedule site_schedule(const loop_site& site, std::string_view text);

/// A schedule given as text (a literal, const char*, std::string, std::string_view).
template <class T>
concept schedule_text = std::is_convertible_v<const T&, std::string_view> && !std::is_same_v<T, schedule>;

}  // namespace aloe::detail
