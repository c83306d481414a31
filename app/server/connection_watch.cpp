// SPDX-License-Identifier: MIT
// ConnectionWatch: finds the server's sockets by peer address, polls them for hang-ups, closes slow senders.
#include "connection_watch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace ember::server {

namespace {

using Clock = std::chrono::steady_clock;

// "address:port" of a socket's local or peer end; empty when it has none.
std::string endpoint(int fd, bool peer, int* port = nullptr) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                        : ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    if (rc != 0) return {};
    char text[INET6_ADDRSTRLEN] = {};
    int p = 0;
    if (addr.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
        ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
        p = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
        ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
        p = ntohs(a->sin6_port);
    } else {
        return {};
    }
    if (port) *port = p;
    return std::string(text) + ":" + std::to_string(p);
}

std::string key_of(const std::string& address, int port) {
    return address + ":" + std::to_string(port);
}

}  // namespace

ConnectionWatch::ConnectionWatch(int port, std::chrono::milliseconds request_deadline)
    : port_(port), deadline_(request_deadline) {
    thread_ = std::thread([this] { loop(); });
}

ConnectionWatch::~ConnectionWatch() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void ConnectionWatch::scan() {
    for (auto& [key, c] : connections_) c.seen = false;
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return;
    while (const dirent* entry = ::readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
        struct stat st {};
        if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        int local_port = 0;
        if (endpoint(static_cast<int>(fd), false, &local_port).empty() || local_port != port_) continue;
        const std::string peer = endpoint(static_cast<int>(fd), true);
        if (peer.empty()) continue;  // the listening socket
        auto [it, fresh] = connections_.try_emplace(peer);
        if (fresh || it->second.fd != fd) {
            it->second = Connection{};
            it->second.since = Clock::now();
        }
        it->second.fd = static_cast<int>(fd);
        it->second.seen = true;
    }
    ::closedir(dir);
    std::erase_if(connections_, [](const auto& kv) { return !kv.second.seen && !kv.second.busy; });
}

void ConnectionWatch::loop() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        scan();
        const auto now = Clock::now();
        for (auto& [key, c] : connections_) {
            if (c.busy || !c.seen || now - c.since < deadline_) continue;
            // Still the same connection? Then it took too long to send its request.
            if (endpoint(c.fd, true) == key) ::shutdown(c.fd, SHUT_RDWR);
            c.since = now;
        }
        wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
    }
}

int ConnectionWatch::find_fd(const std::string& peer_address, int peer_port) {
    const std::string key = key_of(peer_address, peer_port);
    auto it = connections_.find(key);
    if (it == connections_.end() || !it->second.seen) {
        scan();
        it = connections_.find(key);
    }
    return it == connections_.end() || !it->second.seen ? -1 : it->second.fd;
}

void ConnectionWatch::request_arrived(const std::string& peer_address, int peer_port) {
    std::lock_guard lock(mutex_);
    if (find_fd(peer_address, peer_port) >= 0) connections_[key_of(peer_address, peer_port)].since = Clock::now();
}

void ConnectionWatch::handler_started(const std::string& peer_address, int peer_port) {
    std::lock_guard lock(mutex_);
    find_fd(peer_address, peer_port);
    Connection& c = connections_[key_of(peer_address, peer_port)];
    c.busy = true;
}

void ConnectionWatch::handler_finished(const std::string& peer_address, int peer_port) {
    std::lock_guard lock(mutex_);
    const auto it = connections_.find(key_of(peer_address, peer_port));
    if (it == connections_.end()) return;
    it->second.busy = false;
    it->second.since = Clock::now();
}

void ConnectionWatch::close_all() {
    std::lock_guard lock(mutex_);
    scan();
    for (const auto& [key, c] : connections_)
        if (c.seen && endpoint(c.fd, true) == key) ::shutdown(c.fd, SHUT_RDWR);
}

bool ConnectionWatch::peer_closed(const std::string& peer_address, int peer_port) {
    int fd = -1;
    {
        std::lock_guard lock(mutex_);
        fd = find_fd(peer_address, peer_port);
    }
    if (fd < 0) return false;  // not found: never cancel on a guess
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    if (p.revents & POLLIN) {
        char byte;
        return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
    }
    return false;
}

}  // namespace ember::server
