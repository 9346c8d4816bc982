// Parsing and printing of aloe::schedule: `kind[,key=value…]`.
//
// This file splits the string and dispatches; each kind's keys, defaults, values, printing
// and builder live beside the kind (`kind_text<K>` in src/loop/schedules/, the shared
// readers and messages in schedules/spec_text.hpp).
//
// Strict: kind and keys are matched case-insensitively, spaces around tokens are ignored,
// and everything else wrong (unknown kind or key, missing or repeated value, a number with
// trailing characters, a value out of range, a required key missing) is an error naming the
// whole string and the bad part (spec_text.hpp). For OpenMP habits, `static,4`, `dynamic,4`
// and `guided,4` are accepted as chunk sizes. to_string() prints every key, so parsing it
// gives back an equal value.
#include <aloe/error.hpp>
#include <aloe/schedule.hpp>

#include "loop/schedules/adaptive_spec.hpp"
#include "loop/schedules/tasks_spec.hpp"
#include "loop/schedules/dynamic.hpp"
#include "loop/schedules/guided.hpp"
#include "loop/schedules/hybrid.hpp"
#include "loop/schedules/spec_text.hpp"
#include "loop/schedules/staggered.hpp"
#include "loop/schedules/static.hpp"
#include "loop/schedules/tasklets.hpp"
#include "loop/schedules/weighted.hpp"
#include "runtime/plain_text.hpp"
#include "runtime/printable_text.hpp"

#include <array>
#include <cctype>
#include <string>

namespace aloe {

namespace {

using loop::spec_reader;
using runtime::printable;

// One kind's text, as a row: the parser finds the kind by name, to_string() by kind.
struct kind_row {
    schedule_kind kind;
    std::string_view name;
    std::string_view keys;  // accepted keys, for messages
    bool bare_chunk;        // a first item without '=' is the chunk (OpenMP's `dynamic,4`)
    void (*defaults)(schedule&) noexcept;
    bool (*read)(schedule&, std::string_view key, std::string_view value, const spec_reader&);
    bool (*finish)(const spec_reader&);
    std::string (*print)(const schedule&);
};

template <schedule_kind K>
constexpr kind_row row_of() {
    using text = loop::kind_text<K>;
    return {K, text::name, text::keys, text::bare_chunk, &text::defaults, &text::read, &text::finish, &text::print};
}

// In schedule_kind's order (checked below): to_string() indexes it by kind.
constexpr std::array<kind_row, 9> kinds{{
    row_of<schedule_kind::static_block>(),
    row_of<schedule_kind::dynamic>(),
    row_of<schedule_kind::guided>(),
    row_of<schedule_kind::hybrid>(),
    row_of<schedule_kind::staggered>(),
    row_of<schedule_kind::weighted>(),
    row_of<schedule_kind::tasklets>(),
    row_of<schedule_kind::adaptive>(),
    row_of<schedule_kind::tasks>(),
}};

constexpr bool rows_in_kind_order() {
    for (std::size_t i = 0; i < kinds.size(); ++i)
        if (static_cast<std::size_t>(kinds[i].kind) != i) return false;
    return true;
}
static_assert(rows_in_kind_order(), "kinds[] must follow schedule_kind's order");

using runtime::trim;

// The kinds with a static fraction that `slack=` can lower.
constexpr bool kind_takes_slack(schedule_kind k) noexcept {
    return k == schedule_kind::hybrid || k == schedule_kind::staggered || k == schedule_kind::weighted ||
           k == schedule_kind::tasklets || k == schedule_kind::adaptive;
}

std::string keys_of(const kind_row& row) {
    return std::string(row.keys) + (kind_takes_slack(row.kind) ? ", slack" : "");
}

std::string kind_list() {
    std::string out;
    for (const kind_row& k : kinds) out += (out.empty() ? "" : ", ") + std::string(k.name);
    return out;
}

// The next comma-separated item of `rest`, trimmed; `rest` keeps what follows the comma, or
// becomes null (data() == nullptr) after the last item.
std::string_view next_item(std::string_view& rest) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    return item;
}

bool parse(std::string_view spec, schedule& s, std::string& error) {
    spec_reader r(spec, error);
    std::string_view rest = spec;
    const std::string_view kind_item = next_item(rest);
    const std::string name = loop::lower(kind_item);
    if (name.empty()) return r.fail("the kind is missing (expected one of " + kind_list() + ")");
    const kind_row* row = nullptr;
    for (const kind_row& k : kinds)
        if (k.name == name) row = &k;
    if (row == nullptr)
        return r.fail("unknown kind '" + printable(kind_item) + "' (expected one of " + kind_list() + ")");
    row->defaults(s);
    slack_mode slack = slack_mode::automatic;

    for (bool first = true; rest.data() != nullptr; first = false) {
        const std::string_view item = next_item(rest);
        if (item.empty()) return r.fail("empty item after ','");
        const auto eq = item.find('=');
        std::string key;
        std::string_view value;
        if (eq == std::string_view::npos) {
            if (!(first && row->bare_chunk)) return r.fail("'" + printable(item) + "' is not key=value");
            key = "chunk";
            value = item;
        } else {
            key = loop::lower(trim(item.substr(0, eq)));
            value = trim(item.substr(eq + 1));
            if (key.empty()) return r.fail("'" + printable(item) + "' has no key before '='");
        }
        if (value.empty()) return r.fail("key '" + printable(key) + "' has no value");
        if (r.has_key(key)) return r.fail("key '" + printable(key) + "' is given twice");
        r.add_key(key);
        if (key == "slack" && kind_takes_slack(row->kind)) {
            if (!r.read_word(key, value, {"auto", "on", "off"}, slack)) return false;
            continue;
        }
        if (!loop::lists_key(row->keys, key))
            return r.fail(std::string(row->name) + " takes no key '" + printable(key) + "' (keys: " + keys_of(*row) +
                          ")");
        if (!row->read(s, key, value, r)) return false;
    }
    if (!row->finish(r)) return false;
    if (slack != slack_mode::automatic) s = s.with_slack(slack);
    return true;
}

}  // namespace

schedule::schedule(std::string_view spec) {
    std::string message;
    if (!try_parse(spec, *this, message)) throw error(message);
}

bool schedule::try_parse(std::string_view spec, schedule& out, std::string& error_message) {
    schedule s;
    if (!parse(spec, s, error_message)) return false;
    out = s;
    return true;
}

std::string schedule::to_string() const {
    const auto k = static_cast<std::size_t>(kind_);
    if (k >= kinds.size()) return std::string(kinds[0].name);
    std::string text = kinds[k].print(*this);
    if (slack_ != slack_mode::automatic) text += slack_ == slack_mode::on ? ",slack=on" : ",slack=off";
    return text;
}

bool schedule::takes_slack() const noexcept { return kind_takes_slack(kind_); }

schedule schedule::with_slack(slack_mode mode) const {
    if (!takes_slack())
        throw error("schedule '" + to_string() + "': " + std::string(kinds[static_cast<std::size_t>(kind_)].name) +
                    " takes no key 'slack' (keys: " + keys_of(kinds[static_cast<std::size_t>(kind_)]) + ")");
    schedule s = *this;
    s.slack_ = mode == slack_mode::on || mode == slack_mode::off ? mode : slack_mode::automatic;
    return s;
}

// Builders: each kind's make() sets the fields and checks them as the parser would.
schedule schedule::static_blocks() { return schedule(); }
schedule schedule::static_cyclic(std::int64_t chunk) {
    return loop::kind_text<schedule_kind::static_block>::make(chunk);
}
schedule schedule::dynamic(std::int64_t chunk) { return loop::kind_text<schedule_kind::dynamic>::make(chunk); }
schedule schedule::guided(std::int64_t chunk, std::int64_t divisor) {
    return loop::kind_text<schedule_kind::guided>::make(chunk, divisor);
}
schedule schedule::hybrid(double fs, std::int64_t chunk) {
    return loop::kind_text<schedule_kind::hybrid>::make(fs, chunk);
}
schedule schedule::staggered(double fs, std::int64_t chunk, queue_claim claim) {
    return loop::kind_text<schedule_kind::staggered>::make(fs, chunk, claim);
}
schedule schedule::weighted(double fs, std::int64_t chunk) {
    return loop::kind_text<schedule_kind::weighted>::make(fs, chunk);
}
schedule schedule::tasklets(std::int64_t count, double fs, double skew, bool locality) {
    return loop::kind_text<schedule_kind::tasklets>::make(count, fs, skew, locality);
}
schedule schedule::adaptive(adaptive_search search, std::int64_t chunk, delay_model delay) {
    return loop::kind_text<schedule_kind::adaptive>::make(search, chunk, delay);
}

schedule schedule::tasks(std::int64_t grain) {
    return loop::kind_text<schedule_kind::tasks>::make(grain);
}

}  // namespace aloe
