// What every kind's text (`kind_text<K>`, beside each schedule) shares: the limits, the
// readers of one `key=value` of a schedule string with their messages, the printer of reals,
// and the check of a builder's arguments. schedule_spec.cpp splits the string and dispatches
// to the kind; the messages are built here only, so the parser and the builders word a bad
// value alike.
//
// Messages: "schedule '<whole spec>': <what>", both quoted through runtime::printable (a
// value from the environment may hold any bytes). A value out of range reads
// "key=value is outside [lo, hi]", a malformed one "key=value is not an integer" (or "not a
// number"), a word not in its list "key=value is not a, b or c".
//
// Numbers: integers are decimal digits with an optional sign; anything else (4.0, 1e3,
// 0x10) is not an integer, and one beyond int64 is out of range like any other too large
// value. Reals are decimals as std::from_chars reads them, with an optional '+'; their value
// is the nearest double, as IEEE rounding gives it: 1e-400 is 0, 1e400 and inf are infinite
// (outside every range), nan is not a number, and -0 is 0 (printed "0", so round trips stay
// clean).
#pragma once

#include <aloe/schedule.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aloe::loop {

inline constexpr std::int64_t max_chunk = max_schedule_chunk;
/// Tasklet tables live in the team's scratch memory: 2^24 tasklets is 400 MB of tables
/// already, beyond any useful granularity.
inline constexpr std::int64_t max_tasklets = std::int64_t{1} << 24;
inline constexpr double max_skew = 1e6;

/// The shortest text that reads back as `x` (std::to_chars).
std::string number(double x);

/// One schedule string being read. Each read_* converts one value, stores it and returns
/// true, or sets the error (naming the whole spec and the bad part) and returns false.
class spec_reader {
public:
    spec_reader(std::string_view spec, std::string& error) : spec_(spec), error_(error) {}

    /// Sets the error to "schedule '<spec>': <what>"; returns false.
    bool fail(const std::string& what) const;

    bool read_int(std::string_view key, std::string_view value, std::int64_t lo, std::int64_t hi,
                  std::int64_t& out) const;
    bool read_real(std::string_view key, std::string_view value, double lo, double hi, double& out) const;
    /// `value`, any case, as the index of one of `words` (shown as "a, b or c" when wrong).
    template <class Enum>
    bool read_word(std::string_view key, std::string_view value, std::initializer_list<std::string_view> words,
                   Enum& out) const {
        int index = 0;
        if (!read_word_index(key, value, words, index)) return false;
        out = static_cast<Enum>(index);
        return true;
    }
    /// 1 or true, 0 or false.
    bool read_bool(std::string_view key, std::string_view value, bool& out) const;

    /// Keys given so far (the splitter records them, to refuse a repeated one and to let a
    /// kind check that its required keys came).
    bool has_key(std::string_view key) const;
    void add_key(std::string key) { keys_.push_back(std::move(key)); }

private:
    bool read_word_index(std::string_view key, std::string_view value, std::initializer_list<std::string_view> words,
                         int& index) const;

    std::string_view spec_;
    std::string& error_;
    std::vector<std::string> keys_;
};

/// A builder's arguments checked as the parser checks them in the string the builder stands
/// for (same ranges, same order, same message), without making that string unless a check
/// fails. Checks after the first failure do nothing; throw_if_failed() throws aloe::error.
class value_check {
public:
    void integer(std::string_view key, std::int64_t x, std::int64_t lo, std::int64_t hi, std::int64_t& out);
    void real(std::string_view key, double x, double lo, double hi, double& out);

    /// `spec()` makes the string the builder stands for (only called on failure).
    template <class Spec>
    void throw_if_failed(Spec&& spec) const {
        if (!problem_.empty()) [[unlikely]]
            fail(spec());
    }

private:
    [[noreturn]] void fail(const std::string& spec) const;

    std::string problem_;  // the first failure, "key=value is …"
};

/// The accepted key list of a kind, for messages ("fs, chunk"); true when `key` is in it.
bool lists_key(std::string_view keys, std::string_view key);

/// ASCII lower case (kinds, keys and words are matched in any case).
std::string lower(std::string_view s);

/// Each kind's text: its name, its keys, its defaults, reading one key, the check that
/// required keys came, printing, and its builder. A specialisation per kind sits beside the
/// schedule (`static.hpp` … `tasklets.hpp`, `adaptive_spec.hpp`) with its definitions in
/// `<kind>_spec.cpp`; the primary template is declared in <aloe/schedule.hpp> (a friend of
/// aloe::schedule, so the texts set the fields directly). Each provides:
///   static constexpr std::string_view name, keys;  // keys: "fs, chunk"
///   static constexpr bool bare_chunk;               // OpenMP's `dynamic,4`
///   static void defaults(schedule&);                // the kind with every default
///   static bool read(schedule&, std::string_view key, std::string_view value, const spec_reader&);
///   static bool finish(const spec_reader&);         // required keys given?
///   static std::string print(const schedule&);      // the canonical string
/// and a static `make(…)` that the public builder forwards to.
}  // namespace aloe::loop
