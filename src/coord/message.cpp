#include "coord/message.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace aloe::coord {
namespace {

// One description of each body serves both directions: `body(io, m)` lists the fields in
// wire order, with the range the reader enforces; the writer ignores the ranges. A
// layout therefore cannot differ between encode and decode.

class writer {
public:
    explicit writer(std::byte* at) noexcept : at_(at) {}
    template <class T>
    void number(const T& v, std::string_view, T = {}, T = {}) noexcept { put(v); }
    template <class E>
    void enumeration(const E& v, std::string_view, E, E) noexcept {
        put(static_cast<std::underlying_type_t<E>>(v));
    }
    void flags(const std::uint32_t& v, std::string_view, std::uint32_t) noexcept { put(v); }
    void flags(const std::uint16_t& v, std::string_view, std::uint16_t) noexcept { put(v); }
    template <std::size_t N>
    void text(const std::array<char, N>& t, std::string_view) noexcept {
        std::memcpy(at_, t.data(), N);
        at_ += N;
    }
    void padding(std::size_t n) noexcept {
        std::memset(at_, 0, n);
        at_ += n;
    }

private:
    template <class T>
    void put(const T& v) noexcept {
        std::memcpy(at_, &v, sizeof v);
        at_ += sizeof v;
    }
    std::byte* at_;
};

class reader {
public:
    explicit reader(const std::byte* at) noexcept : at_(at) {}
    /// The first field that broke its rule; empty while all are fine.
    std::string_view failed;

    template <class T>
    void number(T& v, std::string_view name, T lo, T hi) noexcept {
        get(v);
        bool ok = true;
        if constexpr (std::is_floating_point_v<T>) ok = std::isfinite(v);
        if (!ok || v < lo || v > hi) fail(name);
    }
    template <class E>
    void enumeration(E& v, std::string_view name, E lo, E hi) noexcept {
        std::underlying_type_t<E> raw{};
        get(raw);
        v = static_cast<E>(raw);
        if (raw < static_cast<std::underlying_type_t<E>>(lo) || raw > static_cast<std::underlying_type_t<E>>(hi)) fail(name);
    }
    template <class T>
    void flags(T& v, std::string_view name, T known) noexcept {
        get(v);
        if ((v & static_cast<T>(~known)) != 0) fail(name);
    }
    template <std::size_t N>
    void text(std::array<char, N>& t, std::string_view name) noexcept {
        std::memcpy(t.data(), at_, N);
        at_ += N;
        // Printable ASCII, then NUL padding to the end (so it always holds a terminator).
        std::size_t i = 0;
        while (i < N && t[i] != '\0') {
            const auto c = static_cast<unsigned char>(t[i]);
            if (c < 0x20 || c >= 0x7f) return fail(name);
            ++i;
        }
        if (i == N) return fail(name);
        for (; i < N; ++i)
            if (t[i] != '\0') return fail(name);
    }
    void padding(std::size_t n) noexcept {
        for (std::size_t i = 0; i < n; ++i)
            if (at_[i] != std::byte{0}) fail("padding");
        at_ += n;
    }

private:
    template <class T>
    void get(T& v) noexcept {
        std::memcpy(&v, at_, sizeof v);
        at_ += sizeof v;
    }
    void fail(std::string_view name) noexcept {
        if (failed.empty()) failed = name;
    }
    const std::byte* at_;
};

constexpr double most_efficiency = 64;      // superlinear speedups exist; 64 is beyond any
constexpr double most_seconds = 1e9;        // about 30 years
constexpr std::int32_t most_pid = 1 << 22;  // the kernel's PID_MAX_LIMIT

template <class IO, class M>
void body(IO& io, M& m) noexcept {
    using T = std::remove_const_t<M>;
    if constexpr (std::is_same_v<T, hello_message>) {
        io.number(m.pid, "pid", 1, most_pid);
        io.flags(m.flags, "flags", client_flags_known);
        io.number(m.own_threads, "own_threads", 1u, max_threads);
        io.text(m.job, "job");
    } else if constexpr (std::is_same_v<T, report_message>) {
        io.number(m.efficiency, "efficiency", 0.0, most_efficiency);
        io.number(m.parallel_seconds, "parallel_seconds", 0.0, most_seconds);
        io.number(m.serial_seconds, "serial_seconds", 0.0, most_seconds);
        io.number(m.threads, "threads", 1u, max_threads);
        io.flags(m.flags, "flags", client_flags_known);
        io.enumeration(m.measure, "measure", efficiency_measure::none, efficiency_measure::declared);
        io.padding(2);
    } else if constexpr (std::is_same_v<T, offer_message>) {
        io.number(m.cores, "cores", 1u, max_threads);
        io.number(m.milliseconds, "milliseconds", 0u, 86'400'000u);
        io.flags(m.flags, "flags", offer_flags_known);
    } else if constexpr (std::is_same_v<T, request_message>) {
        io.number(m.cores, "cores", 0u, max_threads);
    } else if constexpr (std::is_same_v<T, step_message>) {
        io.number(m.steps, "steps", 0u, ~0u);
        io.number(m.own_threads, "own_threads", 0u, max_threads);
        io.number(m.seconds, "seconds", 0.0, most_seconds);
        io.number(m.waited_s, "waited_s", 0.0, most_seconds);
        io.number(m.predicted_s, "predicted_s", -1.0, most_seconds);
        io.number(m.threads_used, "threads_used", 0.0, static_cast<double>(max_threads));
    } else if constexpr (std::is_same_v<T, control_message>) {
        io.enumeration(m.action, "action", control_action::stop, control_action::steer);
        io.enumeration(m.policy, "policy", policy_id::efficiency, policy_id::equipartition);
        io.number(m.pid, "pid", 0, most_pid);
        io.number(m.threads, "threads", 0u, max_threads);
    } else if constexpr (std::is_same_v<T, allocation_message>) {
        io.number(m.threads, "threads", 1u, max_threads);
        io.number(m.clients, "clients", 0u, 1u << 20);
        io.number(m.available, "available", 0u, max_threads);
        io.enumeration(m.policy, "policy", policy_id::efficiency, policy_id::equipartition);
        io.flags(m.flags, "flags", allocation_flags_known);
        io.number(m.share, "share", 0u, max_threads);
        io.number(m.lent, "lent", 0u, max_threads);
        io.number(m.borrowed, "borrowed", 0u, max_threads);
        io.number(m.cpu_base, "cpu_base", 0u, max_threads);
        io.number(m.cpu_mask, "cpu_mask", std::uint64_t{0}, ~std::uint64_t{0});
    } else if constexpr (std::is_same_v<T, status_entry_message>) {
        io.number(m.pid, "pid", 1, most_pid);
        io.number(m.uid, "uid", 0u, 0xfffffffeu);  // (uid_t)-1 is "no uid"
        io.number(m.threads, "threads", 0u, max_threads);
        io.number(m.own_threads, "own_threads", 0u, max_threads);
        io.number(m.efficiency, "efficiency", 0.0, most_efficiency);
        io.flags(m.flags, "flags", client_flags_known);
        io.enumeration(m.measure, "measure", efficiency_measure::none, efficiency_measure::declared);
        io.padding(2);
        io.text(m.name, "name");
        io.text(m.job, "job");
        io.number(m.lent, "lent", 0u, max_threads);
        io.number(m.borrowed, "borrowed", 0u, max_threads);
        body(io, m.step);  // the client's last step message, as it came
    } else if constexpr (std::is_same_v<T, status_end_message>) {
        io.number(m.cores, "cores", 0u, max_threads);
        io.number(m.available, "available", 0u, max_threads);
        io.number(m.clients, "clients", 0u, 1u << 20);
        io.enumeration(m.policy, "policy", policy_id::efficiency, policy_id::equipartition);
        io.padding(2);
        io.number(m.background, "background", 0.0, static_cast<double>(max_threads));
    } else if constexpr (std::is_same_v<T, error_message>) {
        io.enumeration(m.code, "code", error_code::malformed, error_code::busy);
        io.padding(2);
        io.text(m.text, "text");
    } else {
        static_assert(std::is_empty_v<T>, "a body without fields");
    }
}

template <class M>
constexpr std::size_t body_size() noexcept {
    // Counted by writing a default message to a scratch record at compile time would need
    // constexpr memcpy; the sizes are listed once instead and checked by the tests'
    // round-trips (a wrong size fails every decode of that kind).
    if constexpr (std::is_same_v<M, hello_message>) return 4 + 4 + 4 + 48;
    else if constexpr (std::is_same_v<M, report_message>) return 8 + 8 + 8 + 4 + 4 + 2 + 2;
    else if constexpr (std::is_same_v<M, offer_message>) return 4 + 4 + 4;
    else if constexpr (std::is_same_v<M, request_message>) return 4;
    else if constexpr (std::is_same_v<M, step_message>) return 4 + 4 + 8 + 8 + 8 + 8;
    else if constexpr (std::is_same_v<M, control_message>) return 2 + 2 + 4 + 4;
    else if constexpr (std::is_same_v<M, allocation_message>) return 4 + 4 + 4 + 2 + 2 + 4 + 4 + 4 + 4 + 8;
    else if constexpr (std::is_same_v<M, status_entry_message>) return 4 + 4 + 4 + 4 + 8 + 4 + 2 + 2 + 16 + 48 + 4 + 4 + 4 + 4 + 8 + 8 + 8 + 8;
    else if constexpr (std::is_same_v<M, status_end_message>) return 4 + 4 + 4 + 2 + 2 + 8;
    else if constexpr (std::is_same_v<M, error_message>) return 2 + 2 + 96;
    else return 0;
}

template <class M>
constexpr message_kind kind_for() noexcept {
    if constexpr (std::is_same_v<M, hello_message>) return message_kind::hello;
    else if constexpr (std::is_same_v<M, report_message>) return message_kind::report;
    else if constexpr (std::is_same_v<M, goodbye_message>) return message_kind::goodbye;
    else if constexpr (std::is_same_v<M, offer_message>) return message_kind::offer;
    else if constexpr (std::is_same_v<M, request_message>) return message_kind::request;
    else if constexpr (std::is_same_v<M, step_message>) return message_kind::step;
    else if constexpr (std::is_same_v<M, control_message>) return message_kind::control;
    else if constexpr (std::is_same_v<M, status_query_message>) return message_kind::status_query;
    else if constexpr (std::is_same_v<M, allocation_message>) return message_kind::allocation;
    else if constexpr (std::is_same_v<M, status_entry_message>) return message_kind::status_entry;
    else if constexpr (std::is_same_v<M, status_end_message>) return message_kind::status_end;
    else return message_kind::error;
}

template <std::size_t I = 0>
bool decode_body(message_kind k, const std::byte* at, std::size_t size, decoded& out) noexcept {
    if constexpr (I == std::variant_size_v<message>) {
        out.error = decode_error::unknown_kind;
        return false;
    } else {
        using M = std::variant_alternative_t<I, message>;
        if (k != kind_for<M>()) return decode_body<I + 1>(k, at, size, out);
        if (size != header_size + body_size<M>()) {
            out.error = decode_error::size_mismatch;
            return false;
        }
        M m{};
        reader in(at + header_size);
        body(in, m);
        if (!in.failed.empty()) {
            out.error = decode_error::bad_field;
            out.field = in.failed;
            return false;
        }
        out.value = m;
        return true;
    }
}

}  // namespace

message_kind kind_of(const message& m) noexcept {
    return std::visit([](const auto& v) { return kind_for<std::decay_t<decltype(v)>>(); }, m);
}

std::string_view kind_name(message_kind k) noexcept {
    switch (k) {
    case message_kind::hello: return "hello";
    case message_kind::report: return "report";
    case message_kind::goodbye: return "goodbye";
    case message_kind::offer: return "offer";
    case message_kind::request: return "request";
    case message_kind::control: return "control";
    case message_kind::status_query: return "status query";
    case message_kind::step: return "step";
    case message_kind::allocation: return "allocation";
    case message_kind::status_entry: return "status entry";
    case message_kind::status_end: return "status end";
    case message_kind::error: return "error";
    }
    return "unknown";
}

std::string_view policy_name(policy_id p) noexcept {
    switch (p) {
    case policy_id::efficiency: return "efficiency";
    case policy_id::equipartition: return "equipartition";
    }
    return "unknown";
}

std::optional<policy_id> policy_from_name(std::string_view name) noexcept {
    for (const auto p : {policy_id::efficiency, policy_id::equipartition})
        if (name == policy_name(p)) return p;
    return std::nullopt;
}

std::string_view measure_name(efficiency_measure m) noexcept {
    switch (m) {
    case efficiency_measure::none: return "none";
    case efficiency_measure::loop_progress: return "loop progress";
    case efficiency_measure::region_time: return "region time";
    case efficiency_measure::instructions: return "instructions";
    case efficiency_measure::declared: return "declared";
    }
    return "unknown";
}

std::string_view decode_error_text(decode_error e) noexcept {
    switch (e) {
    case decode_error::short_header: return "shorter than a header";
    case decode_error::bad_magic: return "not an aloe message";
    case decode_error::version: return "another protocol version";
    case decode_error::unknown_kind: return "unknown message kind";
    case decode_error::size_mismatch: return "wrong length for its kind";
    case decode_error::bad_field: return "a field out of range";
    }
    return "unknown";
}

std::size_t encode(const message& m, std::uint32_t sequence, record& out) noexcept {
    return std::visit(
        [&](const auto& v) {
            using M = std::decay_t<decltype(v)>;
            constexpr std::size_t size = header_size + body_size<M>();
            static_assert(size <= max_message_size);
            writer w(out.data());
            w.number(protocol_magic, "");
            w.number(protocol_version, "");
            w.number(static_cast<std::uint16_t>(kind_for<M>()), "");
            w.number(static_cast<std::uint32_t>(size), "");
            w.number(sequence, "");
            body(w, v);
            return size;
        },
        m);
}

decoded decode(std::span<const std::byte> bytes) noexcept {
    decoded out;
    if (bytes.size() < header_size) {
        out.error = decode_error::short_header;
        return out;
    }
    std::uint32_t magic = 0, size = 0;
    std::uint16_t kind = 0;
    std::memcpy(&magic, bytes.data(), 4);
    std::memcpy(&out.version, bytes.data() + 4, 2);
    std::memcpy(&kind, bytes.data() + 6, 2);
    std::memcpy(&size, bytes.data() + 8, 4);
    std::memcpy(&out.sequence, bytes.data() + 12, 4);
    if (magic != protocol_magic) {
        out.error = decode_error::bad_magic;
    } else if (out.version != protocol_version) {
        out.error = decode_error::version;
    } else if (size != bytes.size()) {
        out.error = decode_error::size_mismatch;
    } else {
        decode_body(static_cast<message_kind>(kind), bytes.data(), bytes.size(), out);
    }
    return out;
}

}  // namespace aloe::coord
