// runtime/process_state: the state letter of a live, a stopped, a zombie and a missing process.
#include "runtime/process_state.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

namespace aloe::runtime {
namespace {

TEST(RuntimeProcessState, LiveStoppedZombieAndGone) {
    EXPECT_EQ(process_state(::getpid()), 'R') << "the caller runs while it reads";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::raise(SIGSTOP);
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
    ASSERT_TRUE(WIFSTOPPED(status));
    EXPECT_EQ(process_state(child), 'T') << "stopped";
    ::kill(child, SIGCONT);
    siginfo_t info{};  // exited, not reaped (WNOWAIT): a zombie
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
    EXPECT_EQ(process_state(child), 'Z');
    ASSERT_EQ(::waitpid(child, nullptr, 0), child);
    EXPECT_EQ(process_state(child), 0) << "reaped: gone";
}

}  // namespace
}  // namespace aloe::runtime
