// The lending policies' and latencies' text: canonical names, key=value words, and errors
// that name what was wrong.
#include "sim/lending_policy.hpp"
#include "sim/lending_simulation.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace aloe::sim {
namespace {

std::string names(const std::vector<lending_policy>& ps) {
    std::string s;
    for (const auto& p : ps) s += p.to_string() + ";";
    return s;
}

std::string message_thrown_by(const auto& call) {
    try {
        call();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(LendingPolicy, ParsesPoliciesAndTheirWords) {
    EXPECT_EQ(names(parse_lending_policies("off,lewi,lewi,mpi=busy,reactive,predictive")),
              "off;lewi;lewi,mpi=busy;reactive;predictive;");
    const auto ps = parse_lending_policies("predictive,sizing=off,ask=all;predictive,sizing=renew,guard=0.25,ask=critical;lewi,mpi=yield");
    ASSERT_EQ(ps.size(), 3u);
    EXPECT_FALSE(ps[0].ask_critical);  // all: the default
    EXPECT_TRUE(ps[1].ask_critical);
    EXPECT_EQ(ps[0].sizing, lending_policy::sizing_mode::off);
    EXPECT_EQ(ps[1].sizing, lending_policy::sizing_mode::renewed);
    EXPECT_DOUBLE_EQ(ps[1].guard, 0.25);
    EXPECT_FALSE(ps[2].busy_mpi);
    EXPECT_EQ(names(ps), "predictive,sizing=off;predictive,sizing=renew,guard=0.25,ask=critical;lewi;");
}

TEST(LendingPolicy, BadWordsAreNamed) {
    EXPECT_NE(message_thrown_by([] { parse_lending_policies("off,dlb"); }).find("'dlb' is not a policy"), std::string::npos);
    EXPECT_NE(message_thrown_by([] { parse_lending_policies("reactive,mpi=busy"); }).find("does not apply to reactive"), std::string::npos);
    EXPECT_NE(message_thrown_by([] { parse_lending_policies("lewi,mpi=spin"); }).find("mpi is busy or yield"), std::string::npos);
    EXPECT_NE(message_thrown_by([] { parse_lending_policies("predictive,guard=-1"); }).find("guard"), std::string::npos);
    EXPECT_NE(message_thrown_by([] { parse_lending_policies("sizing=on"); }).find("names no policy"), std::string::npos);
    EXPECT_NE(message_thrown_by([] { parse_lending_policies("off,,lewi"); }).find("empty"), std::string::npos);
}

TEST(LendingPolicy, LatenciesChangeOnlyTheKeysGiven) {
    lending_latencies l;
    parse_lending_latencies("poll=200,daemon=0", l);
    EXPECT_DOUBLE_EQ(l.poll_s, 200e-6);
    EXPECT_DOUBLE_EQ(l.daemon_s, 0);
    EXPECT_DOUBLE_EQ(l.grace_s, 50e-6);  // untouched
    parse_lending_latencies("zero", l);
    EXPECT_DOUBLE_EQ(l.grace_s + l.poll_s + l.daemon_s + l.move_s + l.lewi_s + l.slice_s + l.nap_max_s, 0);
    EXPECT_DOUBLE_EQ(l.least_slack_s, 1e-3);  // a threshold, not a latency
    EXPECT_NE(message_thrown_by([&] { parse_lending_latencies("pol=1", l); }).find("'pol' is not a latency"), std::string::npos);
    EXPECT_NE(message_thrown_by([&] { parse_lending_latencies("poll=-1", l); }).find("poll is microseconds"), std::string::npos);
    EXPECT_NE(message_thrown_by([&] { parse_lending_latencies("poll", l); }).find("expected key=microseconds"), std::string::npos);
}

TEST(LendingPolicy, TheBusySliceFollowsTheKernelsRule) {
    lending_latencies l;  // auto: 0.75 ms × (1 + log2 min(cores, 8))
    EXPECT_DOUBLE_EQ(busy_slice_s(l, 1), 0.75e-3);
    EXPECT_DOUBLE_EQ(busy_slice_s(l, 2), 1.5e-3);
    EXPECT_DOUBLE_EQ(busy_slice_s(l, 16), 3e-3);
    l.slice_s = 1e-3;
    EXPECT_DOUBLE_EQ(busy_slice_s(l, 16), 1e-3);
}

TEST(LendingPolicy, RankPatterns) {
    EXPECT_EQ(parse_rank_pattern("1:3", 1e-6, 1e6, "--rank-work"), (std::vector<double>{1, 3}));
    EXPECT_EQ(rank_pattern_text({1, 2.5}), "1:2.5");
    EXPECT_NE(message_thrown_by([] { parse_rank_pattern("1:x", 1e-6, 1e6, "--rank-work"); }).find("--rank-work '1:x': 'x' is not a number"),
              std::string::npos);
    EXPECT_NE(message_thrown_by([] { parse_rank_pattern("0:1", 1e-6, 1e6, "--rank-work"); }).find("'0'"), std::string::npos);
    EXPECT_NE(message_thrown_by([] { parse_rank_pattern("0.5:2", 0, 1, "--rank-noise"); }).find("'2'"), std::string::npos);
}

}  // namespace
}  // namespace aloe::sim
