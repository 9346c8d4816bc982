// The daemon's table and server: allocations from reports (SCAF's worked example end to
// end), limits and water-filling, oversubscription; then a real server on a socket in a
// scratch folder, in a child process, with real connections: registration, refusals, status,
// control, lending within a job, a client killed with SIGKILL, 100 processes at once, a
// second daemon refused.
// No timing assertions: waits are bounded only so that a broken daemon fails instead of
// hanging (the reaction times are measured in bench/coord).
#include "coord/client_table.hpp"
#include "coord/daemon_address.hpp"
#include "coord/daemon_connection.hpp"
#include "coord/daemon_server.hpp"
#include "unit/scratch_folder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <csignal>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace aloe::coord;

hello_message hello(pid_t pid, unsigned own, std::uint32_t flags = client_native) {
    return {pid, flags, own, make_text<48>("")};
}

hello_message hello_in_job(pid_t pid, unsigned own, const char* job) {
    return {pid, client_native, own, make_text<48>(job)};
}

report_message report(double efficiency, unsigned threads, double seconds = 1.0) {
    return {efficiency, seconds, 0.0, threads, client_native, efficiency_measure::declared};
}

TEST(CoordClientTable, ScafWorkedExampleFromTwoReports) {
    // Thesis Fig. 4.2: N = 16; foo reports E = 2/3 at 12 threads, baz E = 3/8 at 4.
    client_table t(16);
    t.add(10, 100, 1000, hello(100, 16), "foo", 0);
    t.add(11, 101, 1000, hello(101, 16), "baz", 0);
    t.rebalance(true);
    ASSERT_TRUE(t.report(10, report(2.0 / 3.0, 12), 1));
    ASSERT_TRUE(t.report(11, report(3.0 / 8.0, 4), 1));
    const auto updates = t.rebalance();
    EXPECT_EQ(t.find(10)->allocated, 14u);
    EXPECT_EQ(t.find(11)->allocated, 2u);
    EXPECT_EQ(updates.size(), 2u);  // both changed from the 8/8 of their arrival
    // Nothing changed: nothing to send.
    EXPECT_TRUE(t.rebalance().empty());
}

TEST(CoordClientTable, NewcomersStartAsAnAverageClientAndLimitsWaterFill) {
    client_table t(16);
    t.add(1, 1, 0, hello(1, 16), "a", 0);
    t.rebalance(true);
    EXPECT_EQ(t.find(1)->allocated, 16u);  // alone: everything it asked for
    t.add(2, 2, 0, hello(2, 4), "b", 0);   // b would run 4 threads alone
    t.rebalance(true);
    EXPECT_EQ(t.find(2)->allocated, 4u);   // never more than its own count
    EXPECT_EQ(t.find(1)->allocated, 12u);  // and the rest is not left idle
    t.steer(*t.find(1), 6);
    t.rebalance();
    EXPECT_EQ(t.find(1)->allocated, 6u);
    t.set_policy(policy_id::equipartition);
    t.steer(*t.find(1), 0);
    t.rebalance();
    EXPECT_EQ(t.find(1)->allocated, 12u);
}

TEST(CoordClientTable, MoreClientsThanCoresGetOneEachAndSaySo) {
    client_table t(2);
    for (int i = 0; i < 3; ++i) t.add(i, i + 1, 0, hello(i + 1, 2), "p", 0);
    const auto updates = t.rebalance(true);
    ASSERT_EQ(updates.size(), 3u);
    for (const auto& u : updates) {
        EXPECT_EQ(u.message.threads, 1u);
        EXPECT_EQ(u.message.clients, 3u);
        EXPECT_NE(u.message.flags & allocation_oversubscribed, 0);
    }
    t.remove(0);
    for (const auto& u : t.rebalance(true)) EXPECT_EQ(u.message.flags & allocation_oversubscribed, 0);
}

TEST(CoordClientTable, ShortOrUnmeasuredReportsDoNotMoveTheFit) {
    client_table t(8);
    t.add(1, 1, 0, hello(1, 8), "a", 0);
    ASSERT_TRUE(t.report(1, report(0.9, 8, 0.0001), 1));  // 0.1 ms: timer noise
    EXPECT_LE(t.find(1)->slope, 0.0);
    auto r = report(0.9, 8);
    r.measure = efficiency_measure::none;
    ASSERT_TRUE(t.report(1, r, 1));
    EXPECT_LE(t.find(1)->slope, 0.0);
    ASSERT_TRUE(t.report(1, report(0.9, 8), 2));
    EXPECT_GT(t.find(1)->slope, 0.0);
    EXPECT_FALSE(t.report(99, report(0.9, 8), 2));  // no such client
}

// --- the server, on a socket of its own ---------------------------------------------------

// The daemon runs in a child process, forked before this process starts any thread: the
// tests fork clients of their own, which is safe only from a single-threaded process (GCC
// 12's ASan allocator is not fork-safe; tests/process/fork_safe_allocator.hpp).
daemon_server* serving = nullptr;
void stop_serving(int) {
    if (serving != nullptr) serving->stop();
}

class CoordServer : public ::testing::Test {
protected:
    void start(unsigned cores, std::size_t max_clients = 1024) {
        int pipe_fds[2];
        ASSERT_EQ(::pipe(pipe_fds), 0);
        server_pid = ::fork();
        ASSERT_GE(server_pid, 0);
        if (server_pid == 0) {
            ::close(pipe_fds[0]);
            daemon_options o;
            o.socket_path = folder.file("aloed.sock");
            o.cores = cores;
            o.max_clients = max_clients;
            o.background_load = false;  // the test machine's load must not change the answers
            std::string problem;
            auto s = daemon_server::open(o, problem);
            if (!s) {
                (void)!::write(pipe_fds[1], problem.data(), problem.size());
                ::_exit(1);
            }
            serving = s.get();
            std::signal(SIGTERM, stop_serving);
            (void)!::write(pipe_fds[1], "ok", 2);
            ::close(pipe_fds[1]);
            const int rc = s->run();
            s.reset();
            ::_exit(rc);
        }
        ::close(pipe_fds[1]);
        std::string said;
        char buf[256];
        for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<std::size_t>(n));
        ::close(pipe_fds[0]);
        ASSERT_EQ(said, "ok");
    }
    // The daemon's exit status, once it has ended.
    int wait_server() {
        int st = 0;
        ::waitpid(server_pid, &st, 0);
        server_pid = 0;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    void TearDown() override {
        if (server_pid > 0) {
            ::kill(server_pid, SIGTERM);
            EXPECT_EQ(wait_server(), 0);
        }
    }
    int connect() {
        const dial_result d = dial_daemon(folder.file("aloed.sock"));
        EXPECT_GE(d.fd, 0) << d.problem;
        return d.fd;
    }
    // The next message on fd (a broken daemon fails the test after 10 s instead of hanging).
    static message next(int fd) {
        const received r = receive_message(fd, 10'000);
        EXPECT_EQ(r.status, receive_status::ok);
        if (r.status != receive_status::ok) return error_message{};
        return *r.record.value;
    }
    static allocation_message next_allocation(int fd) {
        const message m = next(fd);
        EXPECT_TRUE(std::holds_alternative<allocation_message>(m)) << kind_name(kind_of(m));
        return std::holds_alternative<allocation_message>(m) ? std::get<allocation_message>(m) : allocation_message{};
    }
    static std::vector<status_entry_message> status(int fd, status_end_message* end = nullptr) {
        EXPECT_TRUE(send_message(fd, status_query_message{}));
        std::vector<status_entry_message> out;
        for (;;) {
            const message m = next(fd);
            if (const auto* e = std::get_if<status_entry_message>(&m)) out.push_back(*e);
            else {
                if (end && std::holds_alternative<status_end_message>(m)) *end = std::get<status_end_message>(m);
                EXPECT_TRUE(std::holds_alternative<status_end_message>(m));
                return out;
            }
        }
    }

    aloe::testing::scratch_folder folder{"aloe-coord"};
    pid_t server_pid = 0;
};

TEST_F(CoordServer, ANewClientGetsItsAllocationAndOthersAreRebalanced) {
    start(4);
    const int a = connect();
    ASSERT_TRUE(send_message(a, hello(::getpid(), 4)));
    const auto first = next_allocation(a);
    EXPECT_EQ(first.threads, 4u);
    EXPECT_EQ(first.clients, 1u);
    EXPECT_NE(first.flags & allocation_alone, 0);
    const int b = connect();
    ASSERT_TRUE(send_message(b, hello(::getpid(), 4)));
    EXPECT_EQ(next_allocation(b).threads, 2u);
    EXPECT_EQ(next_allocation(a).threads, 2u);  // pushed, unasked
    // A report is answered with the allocation in force.
    ASSERT_TRUE(send_message(a, report(0.9, 2)));
    EXPECT_EQ(next_allocation(a).clients, 2u);
    ASSERT_TRUE(send_message(b, goodbye_message{}));
    EXPECT_EQ(next_allocation(a).threads, 4u);
    ::close(a);
    ::close(b);
}

TEST_F(CoordServer, RefusesWhatItMustAndKeepsServing) {
    start(2);
    const int fd = connect();
    // Someone else's pid in the hello.
    ASSERT_TRUE(send_message(fd, hello(::getpid() + 1, 2)));
    auto m = next(fd);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    EXPECT_EQ(std::get<error_message>(m).code, error_code::not_permitted);
    // A report before a hello.
    ASSERT_TRUE(send_message(fd, report(0.5, 2)));
    m = next(fd);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    EXPECT_EQ(std::get<error_message>(m).code, error_code::not_registered);
    // Garbage, and a message of another version: refused with the reason, connection kept.
    const char junk[] = "not a record at all";
    ASSERT_EQ(::send(fd, junk, sizeof junk, 0), static_cast<ssize_t>(sizeof junk));
    m = next(fd);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    EXPECT_EQ(std::get<error_message>(m).code, error_code::malformed);
    record r{};
    const std::size_t n = encode(hello(::getpid(), 2), 1, r);
    r[4] = std::byte{9};
    ASSERT_EQ(::send(fd, r.data(), n, 0), static_cast<ssize_t>(n));
    m = next(fd);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    EXPECT_EQ(std::get<error_message>(m).code, error_code::version);
    EXPECT_NE(text_of(std::get<error_message>(m).text).find("version 9"), std::string_view::npos);
    // A record longer than any message.
    std::vector<char> big(4096, 'x');
    ASSERT_EQ(::send(fd, big.data(), big.size(), 0), static_cast<ssize_t>(big.size()));
    m = next(fd);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    // A daemon's message sent to the daemon.
    ASSERT_TRUE(send_message(fd, allocation_message{1, 1, 1, policy_id::efficiency, 0}));
    EXPECT_TRUE(std::holds_alternative<error_message>(next(fd)));
    // Still serving: a proper hello works.
    ASSERT_TRUE(send_message(fd, hello(::getpid(), 2)));
    EXPECT_EQ(next_allocation(fd).threads, 2u);
    ::close(fd);
}

TEST_F(CoordServer, AFloodOfBadRecordsClosesThatConnectionOnly) {
    start(2);
    const int good = connect();
    ASSERT_TRUE(send_message(good, hello(::getpid(), 2)));
    EXPECT_EQ(next_allocation(good).threads, 2u);
    const int bad = connect();
    const char junk[] = "junk";
    for (int i = 0; i < 40; ++i) ::send(bad, junk, sizeof junk, MSG_NOSIGNAL);
    int errors = 0;
    for (;;) {
        const received r = receive_message(bad, 10'000);
        if (r.status != receive_status::ok) {
            EXPECT_EQ(r.status, receive_status::closed);
            break;
        }
        ++errors;
    }
    // Each bad record is answered, but the connection closes at the 16th with the flood's
    // rest unread, which the kernel reports to this end as a reset before any answer still
    // queued: at most 16 arrive (often fewer, under load none), then the end.
    EXPECT_LE(errors, 16);
    EXPECT_EQ(status(good).size(), 1u);
    ::close(bad);
    ::close(good);
}

// Valid records, far too many: the one thread that serves every client must not be held by
// one peer. Past 2,000 a second they count as bad records, and the connection is closed.
TEST_F(CoordServer, AFloodOfValidRecordsClosesThatConnection) {
    start(2);
    const int fd = connect();
    record r{};
    const std::size_t n = encode(goodbye_message{}, 0, r);  // a no-op without a hello: no answer
    int sent = 0;
    while (sent < 200'000) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, 10'000) <= 0 || (p.revents & (POLLERR | POLLHUP))) break;
        if (::send(fd, r.data(), n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
            if (errno == EAGAIN) continue;
            break;
        }
        ++sent;
    }
    EXPECT_LT(sent, 200'000) << "the daemon never closed a flooding connection";
    EXPECT_GE(sent, 2000) << "closed before its budget was spent";
    ::close(fd);
    // Others are still served.
    const int good = connect();
    ASSERT_TRUE(send_message(good, hello(::getpid(), 2)));
    EXPECT_EQ(next_allocation(good).threads, 2u);
    ::close(good);
}

TEST_F(CoordServer, StatusControlAndSteering) {
    start(8);
    const int a = connect();
    ASSERT_TRUE(send_message(a, hello(::getpid(), 8, client_interposed)));
    next_allocation(a);
    const int cli = connect();
    status_end_message end;
    const auto entries = status(cli, &end);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].pid, ::getpid());
    EXPECT_EQ(entries[0].uid, ::geteuid());
    EXPECT_EQ(entries[0].threads, 8u);
    EXPECT_EQ(entries[0].flags, client_interposed);
    EXPECT_EQ(end.cores, 8u);
    EXPECT_EQ(end.clients, 1u);
    // Steer: cap the process at 3; it is told at once.
    ASSERT_TRUE(send_message(cli, control_message{control_action::steer, policy_id::efficiency, ::getpid(), 3}));
    EXPECT_TRUE(std::holds_alternative<status_end_message>(next(cli)));
    EXPECT_EQ(next_allocation(a).threads, 3u);
    // Steering a pid that is not a client.
    ASSERT_TRUE(send_message(cli, control_message{control_action::steer, policy_id::efficiency, 1, 3}));
    auto m = next(cli);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    EXPECT_EQ(std::get<error_message>(m).code, error_code::unknown_pid);
    ASSERT_TRUE(send_message(cli, control_message{control_action::set_policy, policy_id::equipartition, 0, 0}));
    m = next(cli);
    ASSERT_TRUE(std::holds_alternative<status_end_message>(m));
    EXPECT_EQ(std::get<status_end_message>(m).policy, policy_id::equipartition);
    // Stop: acknowledged, then run() returns and the socket is gone.
    ASSERT_TRUE(send_message(cli, control_message{control_action::stop, policy_id::efficiency, 0, 0}));
    EXPECT_TRUE(std::holds_alternative<status_end_message>(next(cli)));
    EXPECT_EQ(wait_server(), 0);
    EXPECT_FALSE(std::filesystem::exists(folder.file("aloed.sock")));
    EXPECT_EQ(receive_message(a, 10'000).status, receive_status::closed);
    ::close(a);
    ::close(cli);
}

// Two ranks of one job (both connections of this process, as two ranks' would be): one
// lends, the other borrows, the cores come back when the offer ends and when it is taken
// back. Every step waits for a message, none for a time.
TEST_F(CoordServer, RanksOfOneJobLendCoresUntilTheOfferEnds) {
    start(8);
    const int a = connect();
    ASSERT_TRUE(send_message(a, hello_in_job(::getpid(), 8, "job-7")));
    EXPECT_EQ(next_allocation(a).threads, 8u);
    const int b = connect();
    ASSERT_TRUE(send_message(b, hello_in_job(::getpid(), 8, "job-7")));
    EXPECT_EQ(next_allocation(b).threads, 4u);
    EXPECT_EQ(next_allocation(a).threads, 4u);
    // b asks first: nobody lends yet, so the answer is its allocation as it was.
    ASSERT_TRUE(send_message(b, request_message{3}));
    EXPECT_EQ(next_allocation(b).threads, 4u);
    // a lends 3 until it takes them back: b has them at once.
    ASSERT_TRUE(send_message(a, offer_message{3, 0}));
    EXPECT_EQ(next_allocation(a).threads, 1u);
    EXPECT_EQ(next_allocation(b).threads, 7u);
    const int cli = connect();
    const auto entries = status(cli);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].threads + entries[1].threads, 8u);
    EXPECT_EQ(std::min(entries[0].threads, entries[1].threads), 1u);
    // The same offer for 200 ms replaces it: nothing moves, a is answered with its 1 ...
    ASSERT_TRUE(send_message(a, offer_message{3, 200}));
    EXPECT_EQ(next_allocation(a).threads, 1u);
    // ... and when it ends the cores come back, unasked.
    EXPECT_EQ(next_allocation(a).threads, 4u);
    EXPECT_EQ(next_allocation(b).threads, 4u);
    // Lent again, then taken back by a request of 0.
    ASSERT_TRUE(send_message(a, offer_message{2, 0}));
    EXPECT_EQ(next_allocation(a).threads, 2u);
    EXPECT_EQ(next_allocation(b).threads, 6u);
    ASSERT_TRUE(send_message(a, request_message{0}));
    EXPECT_EQ(next_allocation(a).threads, 4u);
    EXPECT_EQ(next_allocation(b).threads, 4u);
    // A lender that leaves takes its offer with it.
    ASSERT_TRUE(send_message(a, offer_message{3, 0}));
    EXPECT_EQ(next_allocation(a).threads, 1u);
    EXPECT_EQ(next_allocation(b).threads, 7u);
    ::close(a);
    EXPECT_EQ(next_allocation(b).threads, 8u);
    ::close(b);
    ::close(cli);
}

TEST_F(CoordServer, LendingNeedsAHelloThatNamesAJob) {
    start(2);
    const int fd = connect();
    ASSERT_TRUE(send_message(fd, offer_message{1, 0}));
    auto m = next(fd);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    EXPECT_EQ(std::get<error_message>(m).code, error_code::not_registered);
    ASSERT_TRUE(send_message(fd, hello(::getpid(), 2)));
    EXPECT_EQ(next_allocation(fd).threads, 2u);
    ASSERT_TRUE(send_message(fd, request_message{1}));
    m = next(fd);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    EXPECT_EQ(std::get<error_message>(m).code, error_code::not_permitted);
    EXPECT_NE(text_of(std::get<error_message>(m).text).find("no job"), std::string_view::npos);
    ::close(fd);
}

// A rank's last step (protocol 3) is kept and shown in the status; one before a hello is
// refused. A step is not answered: the next message the client gets answers its request.
TEST_F(CoordServer, ARanksLastStepShowsInTheStatus) {
    start(4);
    const int fd = connect();
    ASSERT_TRUE(send_message(fd, step_message{1, 2, 0.01, 0.002, 0.001, 2.0}));
    auto m = next(fd);
    ASSERT_TRUE(std::holds_alternative<error_message>(m));
    EXPECT_EQ(std::get<error_message>(m).code, error_code::not_registered);
    ASSERT_TRUE(send_message(fd, hello_in_job(::getpid(), 2, "job-9")));
    EXPECT_EQ(next_allocation(fd).threads, 2u);
    const int cli = connect();
    auto entries = status(cli);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].step.steps, 0u);  // none reported yet
    ASSERT_TRUE(send_message(fd, step_message{17, 2, 0.012, 0.004, -1, 2.75}));
    ASSERT_TRUE(send_message(fd, step_message{18, 2, 0.011, 0.003, 0.0025, 2.5}));
    ASSERT_TRUE(send_message(fd, request_message{0}));
    EXPECT_EQ(next_allocation(fd).threads, 2u);  // the request's answer: the steps had none
    entries = status(cli);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].step.steps, 18u);
    EXPECT_EQ(entries[0].step.own_threads, 2u);
    EXPECT_DOUBLE_EQ(entries[0].step.seconds, 0.011);
    EXPECT_DOUBLE_EQ(entries[0].step.waited_s, 0.003);
    EXPECT_DOUBLE_EQ(entries[0].step.predicted_s, 0.0025);
    EXPECT_DOUBLE_EQ(entries[0].step.threads_used, 2.5);
    ::close(fd);
    ::close(cli);
}

TEST_F(CoordServer, ASecondDaemonOnTheSameSocketIsRefused) {
    start(2);
    daemon_options o;
    o.socket_path = folder.file("aloed.sock");
    std::string problem;
    EXPECT_EQ(daemon_server::open(o, problem), nullptr);
    EXPECT_NE(problem.find("another aloed already serves"), std::string::npos) << problem;
    EXPECT_NE(problem.find(std::to_string(server_pid)), std::string::npos) << problem;
}

TEST(CoordServerFolder, AStaleSocketIsReplacedAndAPlantedFileIsNot) {
    aloe::testing::scratch_folder folder("aloe-coord");
    daemon_options o;
    o.socket_path = folder.file("aloed.sock");
    o.background_load = false;
    {
        std::string problem;
        auto s = daemon_server::open(o, problem);
        ASSERT_NE(s, nullptr) << problem;
        // Leave the socket file behind as a crashed daemon would: copy it away and back.
        std::filesystem::rename(o.socket_path, folder.file("kept.sock"));
    }
    std::filesystem::rename(folder.file("kept.sock"), o.socket_path);
    EXPECT_EQ(dial_daemon(o.socket_path).error, ECONNREFUSED);  // stale
    std::string problem;
    auto s = daemon_server::open(o, problem);
    ASSERT_NE(s, nullptr) << problem;
    s.reset();
    std::ofstream(o.socket_path) << "not a socket";
    EXPECT_EQ(daemon_server::open(o, problem), nullptr);
    EXPECT_NE(problem.find("not a socket"), std::string::npos) << problem;
    // A folder that is a symlink is refused.
    const std::string link = folder.file("link");
    std::filesystem::create_directory_symlink(folder.path(), link);
    o.socket_path = link + "/aloed.sock";
    EXPECT_EQ(daemon_server::open(o, problem), nullptr);
    EXPECT_NE(problem.find("symbolic link"), std::string::npos) << problem;
}

// A child process that registers with `h` (its pid filled in), is answered, sends `then`
// if given, and waits to be killed; returns once it has done all that (-1: it could not).
pid_t registered_child(const std::string& socket, hello_message h, std::optional<message> then) {
    int ready[2];
    if (::pipe(ready) != 0) return -1;
    const pid_t child = ::fork();
    if (child == 0) {
        h.pid = ::getpid();
        const dial_result d = dial_daemon(socket);
        if (d.fd < 0 || !send_message(d.fd, h) || receive_message(d.fd, 10'000).status != receive_status::ok ||
            (then && !send_message(d.fd, *then)))
            ::_exit(1);
        (void)!::write(ready[1], "r", 1);
        ::pause();
        ::_exit(0);
    }
    char c = 0;
    const bool ok = child > 0 && ::read(ready[0], &c, 1) == 1;
    ::close(ready[0]);
    ::close(ready[1]);
    return ok ? child : -1;
}

// A child process registers; SIGKILL gives no goodbye, yet its cores come back.
TEST_F(CoordServer, AClientKilledWithSigkillHasItsCoresReclaimed) {
    start(4);
    const int a = connect();
    ASSERT_TRUE(send_message(a, hello(::getpid(), 4)));
    EXPECT_EQ(next_allocation(a).threads, 4u);
    const pid_t child = registered_child(folder.file("aloed.sock"), hello(::getpid(), 4), std::nullopt);
    ASSERT_GT(child, 0);
    EXPECT_EQ(next_allocation(a).threads, 2u);
    ::kill(child, SIGKILL);
    int st = 0;
    ::waitpid(child, &st, 0);
    EXPECT_EQ(next_allocation(a).threads, 4u);
    ::close(a);
}

// Issue 19: a rank blocked in MPI lends its whole share (protocol 2); killed while it lends,
// the borrower is told that the core is gone (the daemon sees the exit: pidfd or hang-up).
TEST_F(CoordServer, ALenderKilledWhileLendingItsWholeShareTakesTheCoreAway) {
    start(2);
    const int b = connect();
    ASSERT_TRUE(send_message(b, hello_in_job(::getpid(), 1, "job-9")));
    EXPECT_EQ(next_allocation(b).threads, 1u);
    const pid_t child = registered_child(folder.file("aloed.sock"), hello_in_job(::getpid(), 1, "job-9"),
                                         offer_message{1, 0, offer_whole});
    ASSERT_GT(child, 0);
    ASSERT_TRUE(send_message(b, request_message{1}));
    // The borrower holds both cores, the lender's named (this process may use every CPU, so
    // none is outside its mask: the window is empty), lent and borrowed in the status.
    allocation_message m = next_allocation(b);
    while (m.borrowed == 0) m = next_allocation(b);
    EXPECT_EQ(m.threads, 2u);
    EXPECT_EQ(m.share, 1u);
    const int cli = connect();
    unsigned lent = 0, borrowed = 0;
    for (const auto& e : status(cli)) {
        lent += e.lent;
        borrowed += e.borrowed;
    }
    EXPECT_EQ(lent, 1u);
    EXPECT_EQ(borrowed, 1u);
    ::kill(child, SIGKILL);
    int st = 0;
    ::waitpid(child, &st, 0);
    m = next_allocation(b);
    while (m.borrowed != 0) m = next_allocation(b);
    EXPECT_EQ(m.threads, 1u);  // its own count again: nothing left to borrow
    ::close(cli);
    ::close(b);
}

// A client's fork child inherits the connection: the parent's exit must still be seen
// (pidfd), though the socket stays open in the child.
TEST_F(CoordServer, AClientWhoseChildHoldsTheSocketIsReclaimedWhenItExits) {
    start(4);
    const int a = connect();
    ASSERT_TRUE(send_message(a, hello(::getpid(), 4)));
    next_allocation(a);
    int ready[2], hold[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(hold), 0);
    const pid_t client = ::fork();
    if (client == 0) {
        ::close(hold[1]);  // else the grandchild would hold its own pipe open forever
        const dial_result d = dial_daemon(folder.file("aloed.sock"));
        if (d.fd < 0 || !send_message(d.fd, hello(::getpid(), 4)) || receive_message(d.fd, 10'000).status != receive_status::ok)
            ::_exit(1);
        if (::fork() == 0) {  // the grandchild keeps d.fd open until the test ends
            char x;
            (void)!::read(hold[0], &x, 1);
            ::_exit(0);
        }
        (void)!::write(ready[1], "r", 1);
        ::_exit(0);  // the registered process exits; its socket lives on in the grandchild
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    int st = 0;
    ::waitpid(client, &st, 0);
    // 2 (while both ran) then back to 4 once the exit is seen.
    unsigned last = 0;
    for (int i = 0; i < 4 && last != 4; ++i) last = next_allocation(a).threads;
    EXPECT_EQ(last, 4u);
    ::close(hold[1]);
    for (const int fd : {ready[0], ready[1], hold[0], a}) ::close(fd);
}

TEST_F(CoordServer, AHundredProcessesRegisterAndLeaveWithoutLosingOne) {
    start(128);
    constexpr int n = 100;
    int ready[2], release[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(release), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < n; ++i) {
        const pid_t p = ::fork();
        if (p == 0) {
            ::close(release[1]);
            const dial_result d = dial_daemon(folder.file("aloed.sock"));
            if (d.fd < 0 || !send_message(d.fd, hello(::getpid(), 4))) ::_exit(1);
            const received r = receive_message(d.fd, 10'000);
            if (r.status != receive_status::ok || !std::holds_alternative<allocation_message>(*r.record.value)) ::_exit(2);
            (void)!::write(ready[1], "r", 1);
            char x;
            (void)!::read(release[0], &x, 1);  // until the parent closes it
            ::_exit(0);
        }
        children.push_back(p);
    }
    for (int i = 0; i < n; ++i) {
        char c = 0;
        ASSERT_EQ(::read(ready[0], &c, 1), 1) << "child " << i << " never got an allocation";
    }
    const int cli = connect();
    status_end_message end;
    const auto entries = status(cli, &end);
    EXPECT_EQ(entries.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(end.clients, static_cast<std::uint32_t>(n));
    unsigned sum = 0;
    for (const auto& e : entries) sum += e.threads;
    EXPECT_LE(sum, 128u);
    EXPECT_GE(sum, 100u);
    ::close(release[1]);
    for (const pid_t p : children) {
        int st = 0;
        ::waitpid(p, &st, 0);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    // Every exit is seen (the loop is bounded: a lost client fails the test).
    std::size_t left = n;
    for (int i = 0; i < 200 && left > 0; ++i) {
        left = status(cli).size();
        if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(left, 0u);
    for (const int fd : {ready[0], ready[1], release[0], cli}) ::close(fd);
}

// A daemon killed by SIGKILL leaves its socket file; its pid file then names a dead process.
TEST(CoordAddress, ASocketWhoseDaemonIsDeadIsNoDaemon) {
    aloe::testing::scratch_folder folder("aloe-coord");
    const std::string sock = folder.file("aloed.sock");
    EXPECT_FALSE(daemon_may_listen(sock)) << "nothing there";
    std::ofstream(folder.file("plain")) << "x";
    EXPECT_FALSE(daemon_may_listen(folder.file("plain"))) << "not a socket";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(sock.size(), sizeof addr.sun_path);
    std::copy(sock.begin(), sock.end(), addr.sun_path);
    ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);  // the file stays, as a killed daemon's does
    EXPECT_TRUE(daemon_may_listen(sock)) << "no pid file: may be a daemon";
    std::ofstream(daemon_pid_path(sock)) << ::getpid() << '\n';
    EXPECT_TRUE(daemon_may_listen(sock)) << "its pid file names a live process";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) ::_exit(0);
    ASSERT_EQ(::waitpid(child, nullptr, 0), child);
    std::ofstream(daemon_pid_path(sock)) << child << '\n';
    EXPECT_FALSE(daemon_may_listen(sock)) << "its pid file names a process that is gone";
    const pid_t zombie = ::fork();
    ASSERT_GE(zombie, 0);
    if (zombie == 0) ::_exit(0);
    std::ofstream(daemon_pid_path(sock)) << zombie << '\n';
    siginfo_t info{};  // until it has exited, left a zombie (WNOWAIT: not reaped)
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(zombie), &info, WEXITED | WNOWAIT), 0);
    EXPECT_FALSE(daemon_may_listen(sock)) << "its pid file names a zombie (a killed daemon nobody reaped)";
    ::waitpid(zombie, nullptr, 0);
}

TEST(CoordAddress, WhereClientsAndDaemonsLook) {
    const auto env = [](std::map<std::string, std::string> vars) {
        return [vars](std::string_view name) -> std::optional<std::string> {
            const auto it = vars.find(std::string(name));
            if (it == vars.end()) return std::nullopt;
            return it->second;
        };
    };
    EXPECT_EQ(user_socket_path(env({{"XDG_RUNTIME_DIR", "/run/user/1000"}}), 1000), "/run/user/1000/aloe/aloed.sock");
    EXPECT_EQ(user_socket_path(env({}), 1000), "/tmp/aloe-1000/aloed.sock");
    EXPECT_EQ(user_socket_path(env({{"XDG_RUNTIME_DIR", "relative"}}), 7), "/tmp/aloe-7/aloed.sock");
    const auto both = client_addresses(env({}), 5);
    ASSERT_EQ(both.size(), 2u);
    EXPECT_EQ(both[1].path, system_socket_path);
    const auto one = client_addresses(env({{"ALOE_DAEMON_SOCKET", "/x/y.sock"}}), 5);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].path, "/x/y.sock");
    EXPECT_EQ(daemon_socket_path(env({}), 5, true), system_socket_path);
    EXPECT_EQ(daemon_socket_path(env({}), 5, false, "/given.sock"), "/given.sock");
    EXPECT_TRUE(socket_path_problem(std::string(200, 'a')).has_value());
    EXPECT_FALSE(socket_path_problem("/tmp/a.sock").has_value());
    EXPECT_EQ(dial_daemon(std::string(200, 'a')).error, ENAMETOOLONG);
}

}  // namespace
