// coord/message: every kind round-trips field for field; records that break a rule (short,
// long, another version, garbage, a field out of range, dirty padding or text) are refused
// with the rule named; a seeded fuzzer feeds random and mutated records to the decoder,
// which must never read out of bounds (ASan build) and must accept only what re-encodes to
// the same bytes.
#include "coord/message.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

namespace {

using namespace aloe::coord;

std::vector<std::byte> bytes_of(const message& m, std::uint32_t seq = 7) {
    record r{};
    const std::size_t n = encode(m, seq, r);
    return {r.begin(), r.begin() + static_cast<std::ptrdiff_t>(n)};
}

decoded decode_vec(const std::vector<std::byte>& b) { return decode(std::span<const std::byte>(b.data(), b.size())); }

// Every kind with every field set away from its default.
std::vector<message> samples() {
    hello_message h{4242, client_interposed | client_not_malleable, 16, make_text<48>("job-1@0")};
    report_message r{0.75, 1.5, 0.25, 12, client_native, efficiency_measure::loop_progress};
    offer_message o{3, 250, offer_whole};
    request_message q{2};
    step_message st{41, 4, 0.0125, 0.003, 0.0025, 5.5};
    control_message c{control_action::steer, policy_id::equipartition, 99, 4};
    allocation_message a{14, 2, 16, policy_id::efficiency, allocation_alone, 4, 1, 11, 64, 0x8000'0000'0000'0101ull};
    status_entry_message e{77, 1000, 6, 16, 0.5, client_interposed, efficiency_measure::region_time,
                           make_text<16>("bt.W.x"), make_text<48>(""), 2, 3, {41, 4, 0.0125, 0.003, -1, 5.5}};
    status_end_message end{16, 15, 3, policy_id::equipartition, 0.75};
    error_message err{error_code::not_permitted, make_text<96>("pid 1 belongs to another user")};
    return {h, r, goodbye_message{}, o, q, st, c, status_query_message{}, a, e, end, err};
}

TEST(CoordMessage, EveryKindRoundTripsFieldForField) {
    for (const message& m : samples()) {
        const auto b = bytes_of(m, 31);
        ASSERT_LE(b.size(), max_message_size);
        const decoded d = decode_vec(b);
        ASSERT_TRUE(d.value.has_value()) << kind_name(kind_of(m)) << ": " << decode_error_text(d.error) << " " << d.field;
        EXPECT_EQ(kind_of(*d.value), kind_of(m));
        EXPECT_EQ(d.sequence, 31u);
        // Re-encoding what was decoded gives the same bytes: every field came back.
        EXPECT_EQ(bytes_of(*d.value, 31), b) << kind_name(kind_of(m));
    }
    const auto h = std::get<hello_message>(*decode_vec(bytes_of(samples()[0])).value);
    EXPECT_EQ(h.pid, 4242);
    EXPECT_EQ(h.own_threads, 16u);
    EXPECT_EQ(text_of(h.job), "job-1@0");
    const auto r = std::get<report_message>(*decode_vec(bytes_of(samples()[1])).value);
    EXPECT_DOUBLE_EQ(r.efficiency, 0.75);
    EXPECT_EQ(r.measure, efficiency_measure::loop_progress);
    // Version 2's lending fields.
    const auto o = std::get<offer_message>(*decode_vec(bytes_of(samples()[3])).value);
    EXPECT_EQ(o.flags, offer_whole);
    const auto a = std::get<allocation_message>(*decode_vec(bytes_of(samples()[8])).value);
    EXPECT_EQ(std::tuple(a.share, a.lent, a.borrowed, a.cpu_base), std::tuple(4u, 1u, 11u, 64u));
    EXPECT_EQ(a.cpu_mask, 0x8000'0000'0000'0101ull);
    const auto e = std::get<status_entry_message>(*decode_vec(bytes_of(samples()[9])).value);
    EXPECT_EQ(std::tuple(e.lent, e.borrowed), std::tuple(2u, 3u));
    // Version 3's steps.
    EXPECT_EQ(std::tuple(e.step.steps, e.step.own_threads), std::tuple(41u, 4u));
    EXPECT_DOUBLE_EQ(e.step.predicted_s, -1);  // none predicted
    EXPECT_DOUBLE_EQ(e.step.threads_used, 5.5);
    const auto st = std::get<step_message>(*decode_vec(bytes_of(samples()[5])).value);
    EXPECT_EQ(st.steps, 41u);
    EXPECT_DOUBLE_EQ(st.waited_s, 0.003);
    EXPECT_DOUBLE_EQ(st.predicted_s, 0.0025);
}

TEST(CoordMessage, LendingFieldsOutOfRangeAreRefused) {
    const auto refused_field = [](const message& m, std::string_view field) {
        const decoded d = decode_vec(bytes_of(m));
        EXPECT_FALSE(d.value.has_value());
        EXPECT_EQ(d.field, field);
    };
    refused_field(offer_message{1, 0, 0x2}, "flags");
    refused_field(allocation_message{1, 1, 1, policy_id::efficiency, 0, 1, max_threads + 1, 0, 0, 0}, "lent");
    refused_field(allocation_message{1, 1, 1, policy_id::efficiency, 0, 1, 0, max_threads + 1, 0, 0}, "borrowed");
    status_entry_message e{77, 1000, 6, 16, 0.5, client_interposed, efficiency_measure::region_time,
                           make_text<16>("x"), make_text<48>(""), max_threads + 1, 0};
    refused_field(e, "lent");
    refused_field(step_message{1, 1, -0.5, 0, 0, 1}, "seconds");
    refused_field(step_message{1, 1, 0.01, 0, -2, 1}, "predicted_s");
    refused_field(step_message{1, 1, 0.01, 0, 0, std::nan("")}, "threads_used");
    refused_field(step_message{1, max_threads + 1, 0.01, 0, 0, 1}, "own_threads");
}

TEST(CoordMessage, ShortLongAndForeignRecordsAreRefusedWithTheRuleNamed) {
    const auto b = bytes_of(hello_message{1, 0, 2, {}});
    EXPECT_EQ(decode(std::span<const std::byte>(b.data(), 5)).error, decode_error::short_header);
    EXPECT_EQ(decode(std::span<const std::byte>()).error, decode_error::short_header);
    // One byte short of its kind's size (and the size field says so too).
    auto cut = b;
    cut.pop_back();
    EXPECT_EQ(decode_vec(cut).error, decode_error::size_mismatch);
    const std::uint32_t shorter = static_cast<std::uint32_t>(cut.size());
    std::memcpy(cut.data() + 8, &shorter, 4);
    EXPECT_EQ(decode_vec(cut).error, decode_error::size_mismatch);
    auto longer = b;
    longer.push_back(std::byte{0});
    EXPECT_EQ(decode_vec(longer).error, decode_error::size_mismatch);
    auto magic = b;
    magic[0] = std::byte{'X'};
    EXPECT_EQ(decode_vec(magic).error, decode_error::bad_magic);
    auto version = b;
    const std::uint16_t v2 = protocol_version + 1;
    std::memcpy(version.data() + 4, &v2, 2);
    const decoded dv = decode_vec(version);
    EXPECT_EQ(dv.error, decode_error::version);
    EXPECT_EQ(dv.version, v2);
    auto kind = b;
    const std::uint16_t k = 200;
    std::memcpy(kind.data() + 6, &k, 2);
    EXPECT_EQ(decode_vec(kind).error, decode_error::unknown_kind);
}

TEST(CoordMessage, FieldsOutOfRangeAreRefusedByName) {
    auto refused = [](const message& m, std::string_view field) {
        const decoded d = decode_vec(bytes_of(m));
        EXPECT_FALSE(d.value.has_value()) << field;
        EXPECT_EQ(d.error, decode_error::bad_field) << field;
        EXPECT_EQ(d.field, field);
    };
    refused(hello_message{0, 0, 4, {}}, "pid");
    refused(hello_message{-5, 0, 4, {}}, "pid");
    refused(hello_message{10, 1u << 9, 4, {}}, "flags");
    refused(hello_message{10, 0, 0, {}}, "own_threads");
    refused(hello_message{10, 0, max_threads + 1, {}}, "own_threads");
    refused(report_message{std::nan(""), 1, 0, 2, 0, efficiency_measure::declared}, "efficiency");
    refused(report_message{-0.1, 1, 0, 2, 0, efficiency_measure::declared}, "efficiency");
    refused(report_message{0.5, INFINITY, 0, 2, 0, efficiency_measure::declared}, "parallel_seconds");
    refused(report_message{0.5, 1, -1, 2, 0, efficiency_measure::declared}, "serial_seconds");
    refused(report_message{0.5, 1, 0, 0, 0, efficiency_measure::declared}, "threads");
    refused(report_message{0.5, 1, 0, 2, 0, static_cast<efficiency_measure>(9)}, "measure");
    refused(control_message{static_cast<control_action>(0), policy_id::efficiency, 0, 0}, "action");
    refused(control_message{control_action::set_policy, static_cast<policy_id>(3), 0, 0}, "policy");
    refused(allocation_message{0, 1, 1, policy_id::efficiency, 0}, "threads");
    refused(allocation_message{1, 1, 1, policy_id::efficiency, 0x80}, "flags");
    refused(error_message{static_cast<error_code>(0), {}}, "code");
}

TEST(CoordMessage, TextAndPaddingMustBeCleanSoNoGarbageTravels) {
    // make_text cuts and replaces: what it makes always decodes.
    const auto t = make_text<16>("a name far longer than sixteen\x01");
    EXPECT_EQ(text_of(t), "a name far long");
    EXPECT_EQ(text_of(make_text<16>("tab\there")), "tab?here");
    // A control byte in a text, bytes after its terminator, or no terminator: refused.
    auto b = bytes_of(hello_message{10, 0, 4, make_text<48>("abc")});
    const std::size_t job = header_size + 12;
    auto ctl = b;
    ctl[job + 1] = std::byte{0x07};
    EXPECT_EQ(decode_vec(ctl).field, "job");
    auto after = b;
    after[job + 10] = std::byte{'x'};
    EXPECT_EQ(decode_vec(after).field, "job");
    auto full = b;
    for (std::size_t i = 0; i < 48; ++i) full[job + i] = std::byte{'a'};
    EXPECT_EQ(decode_vec(full).field, "job");
    // The report's two padding bytes must be zero.
    auto pad = bytes_of(report_message{0.5, 1, 0, 2, 0, efficiency_measure::declared});
    pad.back() = std::byte{1};
    EXPECT_EQ(decode_vec(pad).field, "padding");
}

TEST(CoordMessage, PolicyAndMeasureNamesRoundTrip) {
    for (const auto p : {policy_id::efficiency, policy_id::equipartition})
        EXPECT_EQ(policy_from_name(policy_name(p)), p);
    EXPECT_FALSE(policy_from_name("fair").has_value());
    EXPECT_EQ(measure_name(efficiency_measure::loop_progress), "loop progress");
}

// The fuzzer: 200,000 records, a third random bytes of random length (0..160), the rest
// valid records with 1-4 random bytes changed or the length cut or grown. The decoder must
// return (ASan checks it reads nothing outside the span), and any record it accepts must
// re-encode to exactly its bytes: nothing is accepted that the encoder would not write.
TEST(CoordMessage, SeededFuzzNeverCrashesAndAcceptsOnlyCanonicalRecords) {
    std::mt19937_64 rng(20261126);
    const auto valid = samples();
    std::size_t accepted = 0, refused = 0;
    for (int round = 0; round < 200'000; ++round) {
        std::vector<std::byte> b;
        if (round % 3 == 0) {
            b.resize(rng() % 161);
            for (auto& x : b) x = static_cast<std::byte>(rng());
            if (b.size() >= 8 && rng() % 2) {  // often a plausible header, to reach the bodies
                std::memcpy(b.data(), &protocol_magic, 4);
                std::memcpy(b.data() + 4, &protocol_version, 2);
                const std::uint32_t size = static_cast<std::uint32_t>(b.size());
                if (b.size() >= 12) std::memcpy(b.data() + 8, &size, 4);
            }
        } else {
            b = bytes_of(valid[rng() % valid.size()], static_cast<std::uint32_t>(rng()));
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int e = 0; e < edits; ++e) b[rng() % b.size()] = static_cast<std::byte>(rng());
            if (rng() % 8 == 0) b.resize(rng() % (b.size() + 8));
        }
        const decoded d = decode(std::span<const std::byte>(b.data(), b.size()));
        if (d.value) {
            ++accepted;
            ASSERT_EQ(bytes_of(*d.value, d.sequence), b) << "round " << round;
        } else {
            ++refused;
        }
    }
    // Both outcomes happen (a fuzzer that only ever hits one path tests nothing).
    EXPECT_GT(accepted, 1000u);
    EXPECT_GT(refused, 100'000u);
}

}  // namespace
