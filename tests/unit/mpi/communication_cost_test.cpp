// The communication cost's lines, fitted through two calibrated sizes per class, and the
// class of every intercepted call.
#include "mpi/communication_cost.hpp"

#include <gtest/gtest.h>

namespace {

using aloe::mpi::communication_cost;
using aloe::mpi::cost_class;
using aloe::mpi::mpi_call;

TEST(MpiCommunicationCost, FitsALineThroughTwoSizesAndNeverGoesNegative) {
    communication_cost c;
    c.fit(cost_class::reduction, 8, 2e-6, 16384, 18.376e-6);  // 1 ns per byte beyond 2 us
    EXPECT_NEAR(c.line(cost_class::reduction).per_byte_s, 1e-9, 1e-15);
    EXPECT_NEAR(c.of(mpi_call::Allreduce, 1000), 1.992e-6 + 1e-6, 1e-12);
    EXPECT_NEAR(c.of(mpi_call::Scan, 0), 1.992e-6, 1e-12) << "every reduction shares the line";
    c.fit(cost_class::point_to_point, 8, 5e-6, 16384, 3e-6);  // larger measured faster: noise
    EXPECT_EQ(c.line(cost_class::point_to_point).per_byte_s, 0);
    EXPECT_NEAR(c.of(mpi_call::Waitall, 1 << 20), 5e-6, 1e-15);
    EXPECT_EQ(c.of(mpi_call::Barrier, 0), 0) << "a class the calibration did not reach costs 0";
    EXPECT_EQ(c.of(mpi_call::Init, 100), 0);
}

TEST(MpiCommunicationCost, EveryWaitingCallHasAClass) {
    for (int k = 0; k < aloe::mpi::mpi_call_count; ++k) {
        const auto call = static_cast<mpi_call>(k);
        const bool lifetime = aloe::mpi::kind_of(call) == aloe::mpi::call_kind::lifetime;
        EXPECT_EQ(aloe::mpi::cost_class_of(call) == cost_class::none, lifetime) << aloe::mpi::call_name(call);
    }
}

TEST(MpiCommunicationCost, SlackIsTheTimeBeyondTheSmallerCost) {
    EXPECT_DOUBLE_EQ(aloe::mpi::slack_of(100e-6, 10e-6, 1.0), 90e-6);
    EXPECT_DOUBLE_EQ(aloe::mpi::slack_of(100e-6, 10e-6, 4e-6), 96e-6);
    EXPECT_EQ(aloe::mpi::slack_of(3e-6, 10e-6, 3e-6), 0);
}

}  // namespace
