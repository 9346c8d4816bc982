// Where the interposer's threads on borrowed cores sit between regions (omp/guest_seats.hpp):
// each case runs on a thread of its own (a seat is per thread), with borrowed cores set by
// hand through runtime/borrowed_cores.hpp, and reads the thread's affinity back.
#include "omp/guest_seats.hpp"
#include "runtime/borrowed_cores.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace {

using namespace aloe;

cpu_set_t my_mask() {
    cpu_set_t m;
    CPU_ZERO(&m);
    sched_getaffinity(0, sizeof m, &m);
    return m;
}

bool only_on(int cpu) {
    const cpu_set_t m = my_mask();
    return CPU_COUNT(&m) == 1 && CPU_ISSET(cpu, &m);
}

// A CPU this process may use that is not its first: the "borrowed" one (any allowed CPU
// will do when there is only one).
int some_allowed_cpu() {
    const cpu_set_t m = my_mask();
    int found = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &m)) found = c;
    return found;
}

template <class F>
void on_a_new_thread(F f) {
    std::thread t(f);
    t.join();
}

class GuestSeats : public ::testing::Test {
protected:
    void TearDown() override { runtime::set_borrowed_cores(0, {}); }
};

TEST_F(GuestSeats, AGuestSitsOnItsBorrowedCpuAndStaysWhileItIsBorrowed) {
    const int cpu = some_allowed_cpu();
    ASSERT_GE(cpu, 0);
    runtime::set_borrowed_cores(1, {cpu});
    on_a_new_thread([cpu] {
        const cpu_set_t home = my_mask();
        // Thread 1 of a region whose own count is 1: the first guest.
        EXPECT_TRUE(omp::take_guest_seat(1, 1));
        EXPECT_TRUE(only_on(cpu));
        omp::leave_guest_seat();
        EXPECT_TRUE(only_on(cpu)) << "the core is still borrowed: it stays, asleep, for the next region";
        omp::send_guests_home(false);
        EXPECT_TRUE(only_on(cpu));
        // The next region finds it in place, then the rank waits in MPI: everyone goes home.
        EXPECT_TRUE(omp::take_guest_seat(1, 1));
        omp::leave_guest_seat();
        omp::send_guests_home(true);
        const cpu_set_t now = my_mask();
        EXPECT_TRUE(CPU_EQUAL(&now, &home));
    });
}

TEST_F(GuestSeats, AnOwnThreadThatSatOnABorrowedCpuGoesHomeFirst) {
    const int cpu = some_allowed_cpu();
    runtime::set_borrowed_cores(1, {cpu});
    on_a_new_thread([cpu] {
        const cpu_set_t home = my_mask();
        ASSERT_TRUE(omp::take_guest_seat(1, 1));
        omp::leave_guest_seat();
        ASSERT_TRUE(only_on(cpu));
        // A later region of 2 own threads (or one that borrows nothing: own count 0) has it
        // as an own thread: it computes its own share on its own mask.
        EXPECT_FALSE(omp::take_guest_seat(1, 2));
        cpu_set_t now = my_mask();
        EXPECT_TRUE(CPU_EQUAL(&now, &home));
        ASSERT_TRUE(omp::take_guest_seat(1, 1));
        omp::leave_guest_seat();
        EXPECT_FALSE(omp::take_guest_seat(0, 0));
        now = my_mask();
        EXPECT_TRUE(CPU_EQUAL(&now, &home));
    });
}

TEST_F(GuestSeats, AGuestWhoseCoreWasTakenBackGoesHomeInItsBodyOrAsleep) {
    const int cpu = some_allowed_cpu();
    runtime::set_borrowed_cores(1, {cpu});
    on_a_new_thread([] {
        const cpu_set_t home = my_mask();
        ASSERT_TRUE(omp::take_guest_seat(1, 1));
        runtime::set_borrowed_cores(0, {});  // taken back mid-body: it finishes the body at home
        omp::send_guests_home(false);         // (the hook's call, as the thread that hears it makes it)
        const cpu_set_t in_body = my_mask();
        EXPECT_TRUE(CPU_EQUAL(&in_body, &home));
        omp::leave_guest_seat();  // and stays home at its end
        const cpu_set_t now = my_mask();
        EXPECT_TRUE(CPU_EQUAL(&now, &home));
    });
    // Asleep when the core goes: the thread that hears it (here this one) moves it.
    runtime::set_borrowed_cores(1, {cpu});
    std::atomic<int> stage{0};
    cpu_set_t home_of_guest;
    cpu_set_t after;
    std::thread guest([&] {
        home_of_guest = my_mask();
        EXPECT_TRUE(omp::take_guest_seat(1, 1));
        omp::leave_guest_seat();
        stage = 1;
        while (stage.load() != 2) std::this_thread::yield();
        after = my_mask();
    });
    while (stage.load() != 1) std::this_thread::yield();
    omp::send_guests_home(false);  // still borrowed: it stays
    runtime::set_borrowed_cores(0, {});
    omp::send_guests_home(false);  // the hook's call when no interposer registered it
    stage = 2;
    guest.join();
    EXPECT_TRUE(CPU_EQUAL(&after, &home_of_guest));
}

TEST_F(GuestSeats, ANestedRegionInsideAGuestsBodyLeavesItWhereItIs) {
    const int cpu = some_allowed_cpu();
    runtime::set_borrowed_cores(1, {cpu});
    on_a_new_thread([cpu] {
        ASSERT_TRUE(omp::take_guest_seat(1, 1));
        EXPECT_FALSE(omp::take_guest_seat(0, 0));  // its own nested region, as master
        EXPECT_TRUE(only_on(cpu));
        EXPECT_FALSE(omp::take_guest_seat(1, 1));  // a nested region cannot seat it twice
        omp::leave_guest_seat();
        omp::send_guests_home(true);
    });
}

TEST_F(GuestSeats, NoBorrowedCpuNamedKeepsTheGuestOnItsOwnMask) {
    runtime::set_borrowed_cores(1, {});  // a core with no CPU named
    on_a_new_thread([] {
        const cpu_set_t home = my_mask();
        EXPECT_TRUE(omp::take_guest_seat(1, 1));
        const cpu_set_t now = my_mask();
        EXPECT_TRUE(CPU_EQUAL(&now, &home));
        omp::leave_guest_seat();
    });
}

TEST_F(GuestSeats, AThreadThatExitedFreesItsSeat) {
    const int cpu = some_allowed_cpu();
    runtime::set_borrowed_cores(1, {cpu});
    // More threads than seats, one after another: each takes a seat and exits parked.
    for (int i = 0; i < 300; ++i)
        on_a_new_thread([cpu] {
            ASSERT_TRUE(omp::take_guest_seat(1, 1));
            omp::leave_guest_seat();
            EXPECT_TRUE(only_on(cpu));
        });
    omp::send_guests_home(true);  // frees the dead threads' seats (they are not moved)
    on_a_new_thread([cpu] {
        EXPECT_TRUE(omp::take_guest_seat(1, 1));
        EXPECT_TRUE(only_on(cpu));
        omp::leave_guest_seat();
        omp::send_guests_home(true);
    });
}

}  // namespace
