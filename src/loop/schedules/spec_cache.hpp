// String schedules parsed once per loop site (issue 13): `parallel_for(0, n, "dynamic,4",
// body)` and the C API's `aloe_parallel_for(…, "dynamic,4", …)` name their schedule by a
// string at every call; parsing it costs a few hundred nanoseconds, a cache hit a few.
//
// Per thread, a small set-associative table keyed by the site (as site_registry's lookup
// cache keys it: a call site by its file name literal's address, line and column; an
// explicit name by its text) holds the last string met there and its parse. A call whose
// string equals the one remembered for its site copies the parsed value; a changed string is
// parsed and replaces it (one entry per site: a site that alternates two strings parses at
// every call, as without the cache). A bad string is never remembered, so it is parsed and
// refused, with the parser's message, at every call.
//
// Thread-safety: nothing is shared (the table is thread_local), so no lock and no atomic;
// each thread parses a site's string once. The table is trivially destructible (no heap, no
// destructor at thread exit, safe from other thread_local destructors); a site name plus
// string longer than an entry holds is not cached (parsed per call).
#pragma once

#include <aloe/loop_site.hpp>
#include <aloe/schedule.hpp>

#include <string>
#include <string_view>

namespace aloe::loop {

/// The schedule `text` names, remembered for `site` on this thread. False, with the
/// parser's message in `error` and `out` untouched, when `text` is malformed.
bool site_schedule(const loop_site& site, std::string_view text, schedule& out, std::string& error);

}  // namespace aloe::loop
