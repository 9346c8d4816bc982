#include "omp/source_lines.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>

extern char** environ;

namespace aloe::omp {

namespace {

// Runs `addr2line -f -C -e module offsets…` and reads two lines (function, file:line) per
// offset. Empty on any failure: names are a convenience, never a reason to stop.
std::vector<std::string> run_addr2line(const std::string& module, const std::vector<std::uint64_t>& offsets) {
    std::vector<std::string> args = {"addr2line", "-f", "-C", "-e", module};
    for (std::uint64_t o : offsets) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(o));
        args.emplace_back(hex);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    // Both ends above 2 (a program that closed stdin or stdout gets those numbers back from
    // pipe(), and the dup2 onto 1 below would then close the very end it had just made), and
    // close-on-exec (addr2line gets the write end through dup2 only).
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
    for (int& fd : pipe_fds) {
        if (fd > 2) continue;
        const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        fd = moved;
    }
    if (pipe_fds[0] < 0 || pipe_fds[1] < 0) {
        for (const int fd : pipe_fds)
            if (fd >= 0) close(fd);
        return {};
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", 0, 0);
    // The child must not load the interposer again (it has no OpenMP, but say so anyway).
    std::vector<char*> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e)
        if (std::string_view(*e).rfind("LD_PRELOAD=", 0) != 0) env.push_back(*e);
    env.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, "addr2line", &actions, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fds[1]);
    std::string out;
    if (spawned == 0) {
        char buffer[4096];
        for (;;) {
            const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
            if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
            else if (n < 0 && errno == EINTR) continue;
            else break;
        }
    }
    close(pipe_fds[0]);
    if (spawned != 0) return {};
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};

    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < out.size()) {
        const std::size_t eol = out.find('\n', at);
        lines.push_back(out.substr(at, eol == std::string::npos ? std::string::npos : eol - at));
        if (eol == std::string::npos) break;
        at = eol + 1;
    }
    std::vector<std::string> result(offsets.size());
    for (std::size_t i = 0; i < offsets.size() && 2 * i + 1 < lines.size(); ++i) {
        const std::string& function = lines[2 * i];
        std::string place = lines[2 * i + 1];
        if (const std::size_t d = place.find(" (discriminator"); d != std::string::npos) place.resize(d);
        if (place.empty() || place.starts_with("??")) continue;
        // Keep the file's last path component: the summary is read, not parsed.
        if (const std::size_t slash = place.rfind('/'); slash != std::string::npos) place = place.substr(slash + 1);
        result[i] = function.empty() || function == "??" ? place : place + " (" + function + ")";
    }
    return result;
}

}  // namespace

std::vector<std::string> source_lines(const std::vector<code_address>& addresses) {
    std::vector<std::string> result(addresses.size());
    std::map<std::string, std::vector<std::size_t>> by_module;
    for (std::size_t i = 0; i < addresses.size(); ++i) by_module[addresses[i].module].push_back(i);
    for (const auto& [module, indices] : by_module) {
        if (module.empty()) continue;
        std::vector<std::uint64_t> offsets;
        for (std::size_t i : indices) offsets.push_back(addresses[i].offset);
        const std::vector<std::string> names = run_addr2line(module, offsets);
        for (std::size_t k = 0; k < indices.size() && k < names.size(); ++k) result[indices[k]] = names[k];
    }
    return result;
}

std::string file_and_line(const std::string& source_line) {
    const std::size_t space = source_line.find(' ');
    return space == std::string::npos ? source_line : source_line.substr(0, space);
}

}  // namespace aloe::omp
