// SPDX-License-Identifier: MIT
// What cpp-httplib (0.11, Debian 12) does not give a handler: its connection's socket. ConnectionWatch finds the
// server's accepted sockets by address, so that a handler can tell when its client hung up (to cancel the
// generation within one token, streaming or not), and so that a watchdog can close connections that take too
// long to send a request (slowloris: httplib's read timeout is per read, so a byte every few seconds would hold
// an HTTP thread forever). Linux: sockets are found through /proc/self/fd.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace ember::server {

class ConnectionWatch {
public:
    // `port`: the server's listening port. Connections must deliver each whole request within `request_deadline`
    // of connecting or of their previous response.
    ConnectionWatch(int port, std::chrono::milliseconds request_deadline);
    ~ConnectionWatch();

    // A whole request arrived from this peer: its deadline starts again.
    void request_arrived(const std::string& peer_address, int peer_port);
    // A handler runs for the connection from this peer (the deadline does not apply meanwhile).
    void handler_started(const std::string& peer_address, int peer_port);
    void handler_finished(const std::string& peer_address, int peer_port);
    // Shuts every connection down (the server stops: idle keep-alive connections would hold it for seconds).
    void close_all();
    // Whether the client at this peer address has closed its connection (or it is gone). Cheap: one poll(2).
    bool peer_closed(const std::string& peer_address, int peer_port);

private:
    struct Connection {
        int fd = -1;
        std::chrono::steady_clock::time_point since;  // connected, or the last response ended
        bool busy = false;                            // a handler runs
        bool seen = false;                            // found in the latest scan
    };
    void loop();
    void scan();  // mutex_ held
    int find_fd(const std::string& peer_address, int peer_port);

    const int port_;
    const std::chrono::milliseconds deadline_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::map<std::string, Connection> connections_;  // by "address:port" of the peer
    std::thread thread_;
};

}  // namespace ember::server
