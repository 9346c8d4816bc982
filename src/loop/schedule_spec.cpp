// Parsing and printing of aloe::schedule: `kind[,key=value…]`.
//
// Strict: kind and keys are matched case-insensitively, spaces around tokens are ignored,
// and everything else wrong (unknown kind or key, missing or repeated value, a number with
// trailing characters, a value out of range, a required key missing) throws aloe::error
// with the whole string and the bad part, both quoted through runtime::printable (a value
// from the environment may hold any bytes). For OpenMP habits, `static,4`, `dynamic,4` and
// `guided,4` are accepted as chunk sizes. to_string() prints every key, so parsing it
// gives back an equal value.
//
// Numbers: integers (chunk, n) are decimal digits with an optional sign; anything else
// (4.0, 1e3, 0x10) is "not an integer", and one beyond int64 is out of range like any other
// too large value. Reals (fs, skew) are decimals as std::from_chars reads them, with an
// optional '+'; their value is the nearest double, as IEEE rounding gives it: so 1e-400 is 0
// (accepted where 0 is), 1e400 and inf are infinite (outside every range), nan is not a
// number, and -0 is 0 (printed "0", so round trips stay clean).
#include <aloe/error.hpp>
#include <aloe/schedule.hpp>

#include "runtime/printable_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace aloe {

namespace {

constexpr std::int64_t max_chunk = max_schedule_chunk;
// Tasklet tables live in the team's scratch memory: 2^24 tasklets is 400 MB of tables
// already, beyond any useful granularity.
constexpr std::int64_t max_tasklets = std::int64_t{1} << 24;
constexpr double max_skew = 1e6;

struct kind_info {
    std::string_view name;
    schedule_kind kind;
    std::string_view keys;  // accepted keys, for messages
};

constexpr std::array<kind_info, 8> kinds{{
    {"static", schedule_kind::static_block, "chunk"},
    {"dynamic", schedule_kind::dynamic, "chunk"},
    {"guided", schedule_kind::guided, "chunk"},
    {"hybrid", schedule_kind::hybrid, "fs, chunk"},
    {"staggered", schedule_kind::staggered, "fs, chunk, queue"},
    {"weighted", schedule_kind::weighted, "fs, chunk"},
    {"tasklets", schedule_kind::tasklets, "n, fs, skew, locality"},
    {"adaptive", schedule_kind::adaptive, "search, chunk, delay"},
}};

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

using runtime::printable;

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// True when `key` is one of the comma-separated names in `keys`.
bool accepts(std::string_view keys, std::string_view key) {
    for (;;) {
        const auto comma = keys.find(',');
        if (trim(keys.substr(0, comma)) == key) return true;
        if (comma == std::string_view::npos) return false;
        keys.remove_prefix(comma + 1);
    }
}

const kind_info& find_kind(schedule_kind k) {
    for (const kind_info& info : kinds)
        if (info.kind == k) return info;
    return kinds[0];
}

std::string number(double x) {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
    return std::string(buf, end);
}

class parser {
public:
    explicit parser(std::string_view spec) : spec_(spec) {}

    bool parse(schedule_kind& kind, std::int64_t& chunk, double& fs, std::int64_t& tasklets, double& skew,
               bool& locality, queue_claim& claim, adaptive_search& search, delay_model& delay, std::string& error) {
        std::vector<std::string_view> tokens;
        for (std::string_view rest = spec_;;) {
            const auto comma = rest.find(',');
            tokens.push_back(trim(rest.substr(0, comma)));
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
        const std::string name = lower(tokens[0]);
        if (name.empty()) return fail(error, "the kind is missing (expected one of " + kind_list() + ")");
        const kind_info* info = nullptr;
        for (const kind_info& k : kinds)
            if (k.name == name) info = &k;
        if (info == nullptr)
            return fail(error, "unknown kind '" + printable(tokens[0]) + "' (expected one of " + kind_list() + ")");
        kind = info->kind;

        // Defaults per kind (must match the builders in schedule.cpp's section below).
        chunk = (kind == schedule_kind::static_block || kind == schedule_kind::adaptive) ? 0 : 1;
        fs = (kind == schedule_kind::dynamic || kind == schedule_kind::guided || kind == schedule_kind::tasklets) ? 0.0 : 1.0;
        tasklets = 0;
        skew = 1.0;
        locality = true;
        claim = queue_claim::atomic;
        search = adaptive_search::local;
        delay = delay_model::optimistic;

        bool have_fs = false, have_n = false;
        std::vector<std::string> seen;
        for (std::size_t i = 1; i < tokens.size(); ++i) {
            const std::string_view token = tokens[i];
            if (token.empty()) return fail(error, "empty item after ','");
            const auto eq = token.find('=');
            std::string key;
            std::string_view value;
            if (eq == std::string_view::npos) {
                const bool omp_chunk = i == 1 && (kind == schedule_kind::static_block || kind == schedule_kind::dynamic ||
                                                  kind == schedule_kind::guided);
                if (!omp_chunk) return fail(error, "'" + printable(token) + "' is not key=value");
                key = "chunk";
                value = token;
            } else {
                key = lower(trim(token.substr(0, eq)));
                value = trim(token.substr(eq + 1));
                if (key.empty()) return fail(error, "'" + printable(token) + "' has no key before '='");
            }
            if (value.empty()) return fail(error, "key '" + printable(key) + "' has no value");
            if (std::find(seen.begin(), seen.end(), key) != seen.end())
                return fail(error, "key '" + printable(key) + "' is given twice");
            seen.push_back(key);
            if (!accepts(info->keys, key))
                return fail(error, std::string(info->name) + " takes no key '" + printable(key) + "' (keys: " +
                                       std::string(info->keys) + ")");

            if (key == "chunk" && kind == schedule_kind::adaptive && lower(value) == "auto") {
                chunk = 0;
            } else if (key == "chunk") {
                if (!parse_int(value, 1, max_chunk, chunk, key, error)) return false;
            } else if (key == "fs") {
                if (!parse_real(value, 0.0, 1.0, fs, key, error)) return false;
                have_fs = true;
            } else if (key == "n") {
                if (!parse_int(value, 1, max_tasklets, tasklets, key, error)) return false;
                have_n = true;
            } else if (key == "skew") {
                if (!parse_real(value, 1.0, max_skew, skew, key, error)) return false;
            } else if (key == "locality") {
                if (value == "1" || lower(value) == "true") locality = true;
                else if (value == "0" || lower(value) == "false") locality = false;
                else return fail(error, "locality=" + printable(value) + " is not 0 or 1");
            } else if (key == "queue") {
                const std::string v = lower(value);
                if (v == "atomic") claim = queue_claim::atomic;
                else if (v == "mutex") claim = queue_claim::mutex;
                else return fail(error, "queue=" + printable(value) + " is not atomic or mutex");
            } else if (key == "search") {
                const std::string v = lower(value);
                if (v == "local") search = adaptive_search::local;
                else if (v == "nlopt") search = adaptive_search::nlopt;
                else if (v == "sweep") search = adaptive_search::sweep;
                else return fail(error, "search=" + printable(value) + " is not local, nlopt or sweep");
            } else if (key == "delay") {
                const std::string v = lower(value);
                if (v == "optimistic") delay = delay_model::optimistic;
                else if (v == "pessimistic") delay = delay_model::pessimistic;
                else return fail(error, "delay=" + printable(value) + " is not optimistic or pessimistic");
            }
        }
        if ((kind == schedule_kind::hybrid || kind == schedule_kind::staggered) && !have_fs)
            return fail(error, std::string(info->name) + " needs fs=<static fraction in [0, 1]>");
        if (kind == schedule_kind::tasklets && !have_n)
            return fail(error, "tasklets needs n=<tasklet count>");
        return true;
    }

private:
    bool fail(std::string& error, const std::string& what) const {
        error = "schedule '" + printable(spec_) + "': " + what;
        return false;
    }

    static std::string kind_list() {
        std::string out;
        for (const kind_info& k : kinds) out += (out.empty() ? "" : ", ") + std::string(k.name);
        return out;
    }

    // Decimal digits with an optional sign.
    bool parse_int(std::string_view v, std::int64_t lo, std::int64_t hi, std::int64_t& out, const std::string& key,
                   std::string& error) const {
        const std::string shown = key + "=" + printable(v);
        const std::string_view digits = without_plus(v);
        std::int64_t x = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), x);
        if (end != digits.data() + digits.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
            return fail(error, shown + " is not an integer");
        if (ec == std::errc::result_out_of_range || x < lo || x > hi)
            return fail(error, shown + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        out = x;
        return true;
    }

    // A decimal real, rounded to the nearest double (see the file comment).
    bool parse_real(std::string_view v, double lo, double hi, double& out, const std::string& key,
                    std::string& error) const {
        const std::string shown = key + "=" + printable(v);
        const std::string_view digits = without_plus(v);
        double x = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), x);
        if (end != digits.data() + digits.size() || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
            std::isnan(x))
            return fail(error, shown + " is not a number");
        if (ec == std::errc::result_out_of_range) {
            // from_chars leaves x alone; IEEE rounding would give 0 or an infinity.
            const bool negative = digits.front() == '-';
            if (decimal_exponent(digits) < 0) x = 0;
            else x = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
        }
        if (x == 0) x = 0;  // -0 is 0
        if (!(x >= lo && x <= hi)) return fail(error, shown + " is outside [" + number(lo) + ", " + number(hi) + "]");
        out = x;
        return true;
    }

    // from_chars reads '-' but not '+'; "+4" is 4. A second sign stays and is refused.
    static std::string_view without_plus(std::string_view v) {
        if (v.size() > 1 && v[0] == '+' && v[1] != '+' && v[1] != '-') v.remove_prefix(1);
        return v;
    }

    // The power of ten of the first significant digit of a decimal from_chars read whole
    // ("3.2" 0, "0.0012" -3, "1e400" 400); only its sign is used, to tell an overflow from
    // an underflow. Saturates, so a thousand-digit exponent is still just "large".
    static long decimal_exponent(std::string_view v) {
        constexpr long saturated = 1'000'000;
        std::size_t i = (!v.empty() && v[0] == '-') ? 1 : 0;
        long integer_digits = 0, leading_fraction_zeros = 0;
        bool significant = false;
        for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
            significant = significant || v[i] != '0';
            if (significant && integer_digits < saturated) ++integer_digits;
        }
        if (i < v.size() && v[i] == '.') {
            for (++i; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
                if (!significant && v[i] == '0' && leading_fraction_zeros < saturated) ++leading_fraction_zeros;
                else significant = true;
            }
        }
        long exponent = 0;
        if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
            ++i;
            const bool negative = i < v.size() && v[i] == '-';
            if (i < v.size() && (v[i] == '-' || v[i] == '+')) ++i;
            for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i)
                exponent = std::min(saturated, exponent * 10 + (v[i] - '0'));
            if (negative) exponent = -exponent;
        }
        return (integer_digits > 0 ? integer_digits - 1 : -(leading_fraction_zeros + 1)) + exponent;
    }

    std::string_view spec_;
};

schedule must_parse(const std::string& spec) { return schedule(std::string_view(spec)); }

}  // namespace

schedule::schedule(std::string_view spec) {
    std::string message;
    if (!try_parse(spec, *this, message)) throw error(message);
}

bool schedule::try_parse(std::string_view spec, schedule& out, std::string& error_message) {
    schedule s;
    parser p(spec);
    if (!p.parse(s.kind_, s.chunk_, s.fs_, s.tasklets_, s.skew_, s.locality_, s.claim_, s.search_, s.delay_,
                 error_message))
        return false;
    out = s;
    return true;
}

std::string schedule::to_string() const {
    const std::string name(find_kind(kind_).name);
    const std::string chunk = "chunk=" + std::to_string(chunk_);
    const std::string fs = "fs=" + number(fs_);
    switch (kind_) {
        case schedule_kind::static_block: return chunk_ == 0 ? name : name + "," + chunk;
        case schedule_kind::dynamic:
        case schedule_kind::guided: return name + "," + chunk;
        case schedule_kind::hybrid:
        case schedule_kind::weighted: return name + "," + fs + "," + chunk;
        case schedule_kind::staggered:
            return name + "," + fs + "," + chunk + ",queue=" + (claim_ == queue_claim::atomic ? "atomic" : "mutex");
        case schedule_kind::tasklets:
            return name + ",n=" + std::to_string(tasklets_) + "," + fs + ",skew=" + number(skew_) +
                   ",locality=" + (locality_ ? "1" : "0");
        case schedule_kind::adaptive: {
            constexpr std::array<std::string_view, 3> searches{"local", "nlopt", "sweep"};
            return name + ",search=" + std::string(searches[static_cast<std::size_t>(search_)]) +
                   ",chunk=" + (chunk_ == 0 ? std::string("auto") : std::to_string(chunk_)) +
                   ",delay=" + (delay_ == delay_model::optimistic ? "optimistic" : "pessimistic");
        }
    }
    return name;
}

// Builders: format and parse, so a builder validates exactly like the string syntax.
schedule schedule::static_blocks() { return schedule(); }
schedule schedule::static_cyclic(std::int64_t chunk) { return must_parse("static,chunk=" + std::to_string(chunk)); }
schedule schedule::dynamic(std::int64_t chunk) { return must_parse("dynamic,chunk=" + std::to_string(chunk)); }
schedule schedule::guided(std::int64_t chunk) { return must_parse("guided,chunk=" + std::to_string(chunk)); }
schedule schedule::hybrid(double fs, std::int64_t chunk) {
    return must_parse("hybrid,fs=" + number(fs) + ",chunk=" + std::to_string(chunk));
}
schedule schedule::staggered(double fs, std::int64_t chunk, queue_claim claim) {
    return must_parse("staggered,fs=" + number(fs) + ",chunk=" + std::to_string(chunk) +
                      (claim == queue_claim::mutex ? ",queue=mutex" : ""));
}
schedule schedule::weighted(double fs, std::int64_t chunk) {
    return must_parse("weighted,fs=" + number(fs) + ",chunk=" + std::to_string(chunk));
}
schedule schedule::tasklets(std::int64_t count, double fs, double skew, bool locality) {
    return must_parse("tasklets,n=" + std::to_string(count) + ",fs=" + number(fs) + ",skew=" + number(skew) +
                      ",locality=" + (locality ? "1" : "0"));
}

schedule schedule::adaptive(adaptive_search search, std::int64_t chunk, delay_model delay) {
    schedule s = must_parse(chunk == 0 ? "adaptive" : "adaptive,chunk=" + std::to_string(chunk));
    s.search_ = search;
    s.delay_ = delay;
    return s;
}

}  // namespace aloe
