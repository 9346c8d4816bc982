// The short time slice asked for by threads that run microseconds when woken
// (runtime/short_slice.hpp): asked for on the calling thread only, its nice value kept,
// inherited by the threads it makes, and nothing changed for a thread not under SCHED_OTHER.
#include "runtime/short_slice.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

namespace aloe::runtime {
namespace {

id_t own_tid() { return static_cast<id_t>(syscall(SYS_gettid)); }
constexpr auto asked = static_cast<std::int64_t>(short_slice_ns);

struct seen {
    bool granted = false;
    int nice = -100;
    int policy = -1;
    std::int64_t before = -1, after = -1, child = -1;
};

TEST(ShortSlice, TheCallingThreadGetsItKeepsItsNiceValueAndPassesItOn) {
    const std::int64_t main_before = current_slice_ns();
    ASSERT_GE(main_before, 0) << "sched_getattr failed";
    seen s;
    std::thread([&s] {
        // Raising the nice value needs no privilege; the request must not reset it to 0.
        if (setpriority(PRIO_PROCESS, own_tid(), 3) != 0) return;
        s.before = current_slice_ns();
        s.granted = request_short_slice();
        s.nice = getpriority(PRIO_PROCESS, own_tid());
        s.policy = sched_getscheduler(0);
        s.after = current_slice_ns();
        std::thread([&s] { s.child = current_slice_ns(); }).join();
    }).join();
    ASSERT_TRUE(s.granted) << "sched_setattr refused the slice";
    EXPECT_EQ(s.nice, 3);
    EXPECT_EQ(s.policy, SCHED_OTHER);
    // Linux 6.12 and later report the slice asked for; older kernels take the field and
    // report what they did before.
    EXPECT_TRUE(s.after == asked || s.after == s.before) << s.after;
    EXPECT_EQ(s.child, s.after) << "a thread made after the request runs with the same slice";
    EXPECT_EQ(current_slice_ns(), main_before) << "another thread's request changed this one";
}

TEST(ShortSlice, AThreadThatIsNotSchedOtherIsLeftAlone) {
    bool granted = true;
    int policy = -1;
    std::thread([&] {
        const sched_param none{};
        if (sched_setscheduler(0, SCHED_IDLE, &none) != 0) return;  // policy stays -1: fails below
        granted = request_short_slice();
        policy = sched_getscheduler(0);
    }).join();
    EXPECT_EQ(policy, SCHED_IDLE);
    EXPECT_FALSE(granted);
}

}  // namespace
}  // namespace aloe::runtime
