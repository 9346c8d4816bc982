// The messages between aloed and its clients: fixed layouts, one per kind, versioned.
//
// Transport: a Unix-domain SOCK_SEQPACKET connection per client (coord/daemon_address.hpp).
// Each message is one record, so a record's length is the message's length: a short or
// long record is rejected whole, never resynchronised. Who sent a record is what the kernel
// says (SO_PEERCRED, taken once at accept), never a field of the record; the pid fields
// below are what a message refers to, checked against that identity by the daemon.
//
// Layout: a 16-byte header (magic "ALOE", version, kind, size, sequence) and a body of a
// size fixed by the kind; every field at a fixed offset, in the host's byte order (both
// ends are on one node), written and read field by field (no struct is sent: no padding,
// no uninitialised byte leaves the process). Text fields are NUL-padded and must hold only
// printable ASCII before the padding. A decoder takes any bytes and either returns one
// message whose every field is in range or says which rule the bytes broke; it allocates
// nothing (tests/unit/coord/message_test.cpp fuzzes it).
//
// Versioning: `protocol_version` changes whenever a layout does. Each side rejects another
// version with `decode_error::version` (the daemon answers with an error naming both), so
// an old client never misreads a new daemon: it runs alone and says why.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

namespace aloe::coord {

inline constexpr std::uint32_t protocol_magic = 0x454f4c41;  // "ALOE" in little-endian order
// 2: offers carry flags (a rank blocked in MPI lends its whole share); allocations carry the
// share, what was lent and borrowed and the borrowed CPUs; status entries what was lent and
// borrowed (issue 19).
inline constexpr std::uint16_t protocol_version = 3;
inline constexpr std::size_t header_size = 16;
/// No record is longer: a receive buffer of this size plus one byte detects a long one.
inline constexpr std::size_t max_message_size = 192;
/// Bounds the daemon accepts (a node of 4096 CPUs is beyond any we know of).
inline constexpr std::uint32_t max_threads = 4096;

enum class message_kind : std::uint16_t {
    // client -> daemon
    hello = 1,          ///< register: what the program is and would run with alone
    report = 2,         ///< its measured efficiency; the daemon answers with an allocation
    goodbye = 3,        ///< leaving: its cores go back now
    offer = 4,          ///< lend cores for a time to ranks of the same job (a rank that will wait)
    request = 5,        ///< ask for cores beyond the allocation from them (the critical rank)
    control = 6,        ///< from `aloe daemon`: stop, switch policy, steer one process
    status_query = 7,   ///< from `aloe daemon status` and `aloe top`
    step = 8,           ///< a rank's last step of lending (shown by status and top; no answer)
    // daemon -> client
    allocation = 64,    ///< the threads to run with, sent on change and as answers
    status_entry = 65,  ///< one client, in answer to a status query
    status_end = 66,    ///< the daemon's own state; ends a status answer
    error = 67,         ///< a refused message, with the reason
};

/// How a client measures its efficiency (aloe info and the status say which each uses).
enum class efficiency_measure : std::uint16_t {
    none = 0,             ///< nothing measured yet
    loop_progress = 1,    ///< iterations per CPU-second at p threads against a serial sample
    region_time = 2,      ///< region time across allocations
    instructions = 3,     ///< perf_event_open instructions per second against a serial sample
    declared = 4,         ///< the program says (a heartbeat API; tests)
};

/// The daemon's allocation policies (coord/ policies; `aloe daemon policy NAME`).
enum class policy_id : std::uint16_t {
    efficiency = 1,    ///< SCAF's efficiency-proportional shares (the default)
    equipartition = 2, ///< equal shares
};

// Flags of a client (hello, report, status_entry).
inline constexpr std::uint32_t client_not_malleable = 1u << 0;  ///< fixed thread count: confine by affinity
inline constexpr std::uint32_t client_interposed = 1u << 1;     ///< an OpenMP program under `aloe run`
inline constexpr std::uint32_t client_native = 1u << 2;         ///< an aloe-native program
inline constexpr std::uint32_t client_flags_known = (1u << 3) - 1;

// Flags of an allocation.
inline constexpr std::uint16_t allocation_alone = 1u << 0;          ///< no other client
inline constexpr std::uint16_t allocation_oversubscribed = 1u << 1; ///< more clients than cores
inline constexpr std::uint16_t allocation_flags_known = (1u << 2) - 1;

enum class control_action : std::uint16_t {
    stop = 1,        ///< the daemon exits; clients run alone
    set_policy = 2,  ///< `policy` becomes the daemon's
    steer = 3,       ///< cap `pid`'s threads at `threads` (0 lifts the cap)
};

enum class error_code : std::uint16_t {
    malformed = 1,      ///< the record broke a rule of this file (text says which)
    version = 2,        ///< another protocol version
    not_registered = 3, ///< a report before a hello
    not_permitted = 4,  ///< another user's process or the daemon's control
    unknown_pid = 5,    ///< steer: no client with that pid
    busy = 6,           ///< too many clients
};

using text16 = std::array<char, 16>;
using text48 = std::array<char, 48>;
using text96 = std::array<char, 96>;

struct hello_message {
    std::int32_t pid = 0;            ///< must be the sender's (SO_PEERCRED)
    std::uint32_t flags = 0;         ///< client_*
    std::uint32_t own_threads = 0;   ///< what it would run with alone (1..max_threads)
    text48 job{};                    ///< the MPI job it belongs to ("" when none)
};
struct report_message {
    double efficiency = 0;           ///< speedup / threads, in [0, 64]
    double parallel_seconds = 0;     ///< time it covers in parallel code, >= 0
    double serial_seconds = 0;       ///< and between parallel parts, >= 0
    std::uint32_t threads = 0;       ///< the threads it ran with (1..max_threads)
    std::uint32_t flags = 0;         ///< client_* as now (a program can turn non-malleable)
    efficiency_measure measure = efficiency_measure::none;
};
struct goodbye_message {};
// Offers and requests (served by aloed: coord/core_lending.hpp has the rules). Only a
// client whose hello named a job may send them (else: error not_permitted); they lend to
// and borrow from clients of the same user and job. A client has at most one standing
// offer or one standing request: a new offer replaces its offer and ends its request, a
// new request replaces its request and ends its offer, so a request of 0 takes an offer
// back (no message of its own was needed). A new hello, a goodbye or the client's exit end
// both. Each is answered with the sender's allocation, after the daemon applied it.
// Flags of an offer.
/// The lender is blocked (in an MPI call, waiting politely): it may lend its whole share,
/// not its share minus the thread it keeps; its allocation still says 1 (what it runs with
/// when it returns before taking the offer back).
inline constexpr std::uint32_t offer_whole = 1u << 0;
inline constexpr std::uint32_t offer_flags_known = (1u << 1) - 1;

struct offer_message {
    std::uint32_t cores = 0;         ///< 1..max_threads; a lender keeps at least 1 thread unless offer_whole
    std::uint32_t milliseconds = 0;  ///< how long at most, up to a day (0: until taken back)
    std::uint32_t flags = 0;         ///< offer_*
};
struct request_message {
    std::uint32_t cores = 0;         ///< beyond its share, 0..max_threads (0: none wanted any more)
};
// A rank's last completed step as libaloe-mpi reports it (mpi/lending_steps.hpp), a few
// times a second at most: `aloe daemon status` and `aloe top` show it. Not answered.
struct step_message {
    std::uint32_t steps = 0;         ///< steps completed so far
    std::uint32_t own_threads = 0;   ///< the rank's own cores (its share), 0..max_threads
    double seconds = 0;              ///< the step's length, >= 0
    double waited_s = 0;             ///< inside its blocking calls (the actual slack), >= 0
    double predicted_s = -1;         ///< their predicted slack; -1: none predicted
    double threads_used = 0;         ///< on average: own, less lent, plus borrowed
};
struct control_message {
    control_action action = control_action::stop;
    policy_id policy = policy_id::efficiency;  ///< set_policy
    std::int32_t pid = 0;                      ///< steer
    std::uint32_t threads = 0;                 ///< steer (0..max_threads)
};
struct status_query_message {};
struct allocation_message {
    std::uint32_t threads = 0;       ///< 1..max_threads: the share, less lent, plus borrowed
    std::uint32_t clients = 0;       ///< how many share the node now
    std::uint32_t available = 0;     ///< the cores the daemon shares out (after background load)
    policy_id policy = policy_id::efficiency;
    std::uint16_t flags = 0;         ///< allocation_*
    std::uint32_t share = 0;         ///< the policy's threads before lending (0..max_threads)
    std::uint32_t lent = 0;          ///< taken from this client by ranks of its job
    std::uint32_t borrowed = 0;      ///< given to it by ranks of its job
    /// The CPUs of the borrowed cores where the daemon could name them (a lender's CPUs
    /// that the borrower's affinity does not already hold): bit i is CPU cpu_base + i.
    /// Fewer bits than `borrowed` (an unbound lender): the rest run where the borrower may.
    std::uint32_t cpu_base = 0;
    std::uint64_t cpu_mask = 0;
};
struct status_entry_message {
    std::int32_t pid = 0;
    std::uint32_t uid = 0;
    std::uint32_t threads = 0;       ///< allocated, lent cores off and borrowed ones on
    std::uint32_t own_threads = 0;   ///< asked for alone
    double efficiency = 0;           ///< the smoothed value the policy uses
    std::uint32_t flags = 0;         ///< client_*
    efficiency_measure measure = efficiency_measure::none;
    text16 name{};                   ///< /proc/<pid>/comm
    text48 job{};
    std::uint32_t lent = 0;          ///< cores it lends to ranks of its job now
    std::uint32_t borrowed = 0;      ///< and borrows from them
    step_message step{};             ///< its last step message (steps 0: none came)
};
struct status_end_message {
    std::uint32_t cores = 0;         ///< the node's, as the daemon counts them
    std::uint32_t available = 0;     ///< after background load
    std::uint32_t clients = 0;       ///< all of them (a user is shown only their own entries)
    policy_id policy = policy_id::efficiency;
    double background = 0;           ///< CPUs' worth used by processes it does not steer
};
struct error_message {
    error_code code = error_code::malformed;
    text96 text{};
};

using message = std::variant<hello_message, report_message, goodbye_message, offer_message,
                             request_message, step_message, control_message, status_query_message,
                             allocation_message, status_entry_message, status_end_message,
                             error_message>;

message_kind kind_of(const message& m) noexcept;
std::string_view kind_name(message_kind k) noexcept;
std::string_view policy_name(policy_id p) noexcept;
std::optional<policy_id> policy_from_name(std::string_view name) noexcept;
std::string_view measure_name(efficiency_measure m) noexcept;

/// Why a record was refused.
enum class decode_error : std::uint8_t {
    short_header, bad_magic, version, unknown_kind, size_mismatch, bad_field,
};
std::string_view decode_error_text(decode_error e) noexcept;

struct decoded {
    std::optional<message> value;  ///< set when the record is valid
    decode_error error = decode_error::bad_field;
    std::uint16_t version = 0;     ///< the record's version (for the daemon's answer)
    std::uint32_t sequence = 0;
    std::string_view field;        ///< the field that broke a rule (bad_field)
};

using record = std::array<std::byte, max_message_size>;

/// Writes `m` with `sequence` into `out`; returns its length.
std::size_t encode(const message& m, std::uint32_t sequence, record& out) noexcept;

/// Reads one record. Never reads past `bytes`, never allocates.
decoded decode(std::span<const std::byte> bytes) noexcept;

/// Copies `s` into a NUL-padded text field: what does not fit, and any byte that is not
/// printable ASCII, is replaced ('?') or cut, so the result always decodes.
template <std::size_t N>
std::array<char, N> make_text(std::string_view s) noexcept {
    std::array<char, N> t{};
    for (std::size_t i = 0; i < s.size() && i + 1 < N; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        t[i] = c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
    }
    return t;
}
template <std::size_t N>
std::string_view text_of(const std::array<char, N>& t) noexcept {
    std::size_t n = 0;
    while (n < N && t[n] != '\0') ++n;
    return {t.data(), n};
}

}  // namespace aloe::coord
