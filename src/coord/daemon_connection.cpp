#include "coord/daemon_connection.hpp"

#include "coord/daemon_address.hpp"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace aloe::coord {

std::optional<peer_identity> peer_of(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return std::nullopt;
    return peer_identity{cred.pid, cred.uid, cred.gid};
}

dial_result dial_daemon(const std::string& path) {
    dial_result out;
    if (const auto problem = socket_path_problem(path)) {
        out.error = ENAMETOOLONG;
        out.problem = *problem;
        return out;
    }
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        out.error = errno;
        out.problem = std::string("cannot make a socket: ") + std::strerror(errno);
        return out;
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    // A Unix-domain connect either completes at once or fails (EAGAIN: the daemon's
    // backlog is full, which a client treats like a daemon that does not answer).
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        out.error = errno;
        out.problem = "cannot connect to " + path + ": " + std::strerror(errno);
        ::close(fd);
        return out;
    }
    const auto peer = peer_of(fd);
    if (!peer || (peer->uid != ::geteuid() && peer->uid != 0)) {
        out.error = EPERM;
        out.problem = "the socket " + path + " is served by uid " + (peer ? std::to_string(peer->uid) : "?") +
                      ", neither this user nor root; not using it";
        ::close(fd);
        return out;
    }
    out.fd = fd;
    return out;
}

bool send_message(int fd, const message& m, std::uint32_t sequence) {
    record r{};
    const std::size_t n = encode(m, sequence, r);
    const ssize_t sent = ::send(fd, r.data(), n, MSG_DONTWAIT | MSG_NOSIGNAL);
    return sent == static_cast<ssize_t>(n);
}

received receive_message(int fd, int timeout_ms) {
    received out;
    pollfd p{fd, POLLIN, 0};
    int ready = 0;
    do ready = ::poll(&p, 1, timeout_ms);
    while (ready < 0 && errno == EINTR);
    if (ready < 0) {
        out.error = errno;
        return out;
    }
    if (ready == 0) {
        out.status = receive_status::timeout;
        return out;
    }
    // One byte more than the longest message, and MSG_TRUNC for the record's true length:
    // a long record is consumed whole and refused, never read as two.
    std::array<std::byte, max_message_size + 1> buffer{};
    ssize_t n = 0;
    do n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT | MSG_TRUNC);
    while (n < 0 && errno == EINTR);
    if (n == 0) {
        out.status = receive_status::closed;
        return out;
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            out.status = receive_status::timeout;
            return out;
        }
        out.status = errno == ECONNRESET ? receive_status::closed : receive_status::failed;
        out.error = errno;
        return out;
    }
    if (static_cast<std::size_t>(n) > max_message_size) {
        out.status = receive_status::invalid;
        out.record.error = decode_error::size_mismatch;
        return out;
    }
    out.record = decode(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(n)));
    out.status = out.record.value ? receive_status::ok : receive_status::invalid;
    return out;
}

}  // namespace aloe::coord
