// The draws the noise streams make: the ziggurat's exponential and the fast logarithm.
#include "sim/random_stream.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace aloe::sim {
namespace {

TEST(RandomStream, ExponentialHasItsMeanVarianceAndTail) {
    random_stream r(42, 0, 0, 1);
    const int n = 1'000'000;
    double sum = 0, sq = 0;
    int beyond3 = 0, beyond8 = 0;
    for (int i = 0; i < n; ++i) {
        const double x = r.exponential(1.0);
        ASSERT_GE(x, 0);
        sum += x;
        sq += x * x;
        beyond3 += x > 3;
        beyond8 += x > 8;  // past the ziggurat's base layer (r = 7.697)
    }
    const double mean = sum / n, var = sq / n - mean * mean;
    EXPECT_NEAR(mean, 1.0, 0.005);  // 5 standard errors
    EXPECT_NEAR(var, 1.0, 0.02);
    EXPECT_NEAR(beyond3 / double(n), std::exp(-3.0), 0.001);
    EXPECT_NEAR(beyond8 / double(n), std::exp(-8.0), 0.0002);
    EXPECT_GT(beyond8, 0);
}

TEST(RandomStream, FastLogMatchesTheLibrary) {
    for (double x : {1e-300, 1e-17, 0.001, 0.3, 0.5, 0.7071, 0.99999, 1.0, 1.5, 2.0, 1e10})
        EXPECT_NEAR(random_stream::fast_log(x), std::log(x), 1e-9 * std::max(1.0, std::abs(std::log(x)))) << x;
}

TEST(RandomStream, StreamsOfDifferentKeysDiffer) {
    random_stream a(1, 0, 0, 1), b(1, 1, 0, 1), c(1, 0, 1, 1), d(2, 0, 0, 1), e(1, 0, 0, 1);
    const auto first = a.next();
    EXPECT_NE(first, b.next());
    EXPECT_NE(first, c.next());
    EXPECT_NE(first, d.next());
    EXPECT_EQ(first, e.next());
}

}  // namespace
}  // namespace aloe::sim
