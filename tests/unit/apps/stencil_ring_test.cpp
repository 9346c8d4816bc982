// apps/stencil1d-tasks' ring (ring.hpp): how a partitioning cuts the ring, and that a timestep
// partition by partition gives the bits of one over the whole ring, whatever the cut (the
// property that makes every runtime's and every epoch's repartitioned result the serial one).
#include "stencil1d-tasks/ring.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {
using namespace aloe_apps::stencil;

TEST(AppsStencilRing, PartitioningCoversTheRingOnce) {
    for (const std::int64_t nx : {1, 2, 3, 17, 1000}) {
        for (const std::int64_t size : {1, 2, 3, 7, 64, 1000, 5000}) {
            const partitioning parts = partitioning::of(nx, size);
            std::vector<int> seen(static_cast<std::size_t>(nx), 0);
            for (std::int64_t p = 0; p < parts.count; ++p) {
                EXPECT_LT(parts.begin(p), parts.end(p)) << nx << " " << size << " " << p;
                for (std::int64_t i = parts.begin(p); i < parts.end(p); ++i) ++seen[static_cast<std::size_t>(i)];
                EXPECT_EQ(parts.right(parts.left(p)), p);
            }
            for (const int s : seen) EXPECT_EQ(s, 1) << nx << " " << size;
        }
    }
    EXPECT_EQ(partitioning::of(10, 0).size, 1);    // clamped to [1, nx]
    EXPECT_EQ(partitioning::of(10, 99).count, 1);
}

TEST(AppsStencilRing, AnyPartitioningGivesTheWholeRingsBits) {
    const std::int64_t nx = 1009;  // a prime: no size but 1 and nx divides it
    ring whole(nx, 0.5);
    for (int s = 0; s < 20; ++s) step_serial(whole, partitioning::of(nx, nx));
    for (const std::int64_t size : {1, 2, 3, 10, 64, 500, 1008}) {
        ring cut(nx, 0.5);
        for (int s = 0; s < 20; ++s) step_serial(cut, partitioning::of(nx, s % 2 == 0 ? size : 7));  // repartitioned
        EXPECT_EQ(cut.u[cut.now], whole.u[whole.now]) << "partition size " << size;
    }
}

TEST(AppsStencilRing, HeatIsHpxsUpdate) {
    // k dt / dx^2 = 0.5 with f(0, i) = i: an interior point becomes the mean of its neighbours,
    // and the two ends of the ring meet (point 0 reads point nx - 1).
    ring r(5, 0.5);
    step_serial(r, partitioning::of(5, 2));
    const std::vector<double> expected = {2.5, 1.0, 2.0, 3.0, 1.5};
    EXPECT_EQ(r.u[r.now], expected);
}

}  // namespace
