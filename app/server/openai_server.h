// SPDX-License-Identifier: MIT
// The OpenAI-compatible HTTP server (cpp-httplib): GET /v1/models, POST /v1/chat/completions (JSON or server-sent
// events), POST /v1/completions, GET /health, GET /metrics (Prometheus). Generations run on an EngineHost, one at a
// time, first come first served; a client that hangs up cancels its generation before the next token.
//
// Safety: listens on 127.0.0.1 unless told otherwise; with an API key every request but /health needs
// "Authorization: Bearer KEY" (compared in constant time); request bodies are capped; a connection must deliver
// each request within a deadline; every bad request gets a 4xx with an OpenAI error object, never a crash.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "engine_host.h"

namespace ember::server {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;                                    // 0: any free port (see port())
    std::string api_key;                                // empty: no key needed
    size_t max_body_bytes = 8 << 20;                    // larger bodies get 413
    std::chrono::seconds io_timeout{10};                // one read or write of a connection
    std::chrono::milliseconds request_deadline{10000};  // a whole request, from connecting or the last response
    int http_threads = 16;  // connections served at once (generations still queue on the engine)
};

class OpenAiServer {
public:
    OpenAiServer(EngineHost& host, ServerOptions options);
    ~OpenAiServer();  // stop()

    // Binds and serves on threads of its own. Throws ember::Error naming the address when it cannot listen.
    void start();
    // Cancels the generations in flight, stops listening and waits for the HTTP threads (about one token).
    void stop();
    bool running() const;
    int port() const;              // the bound port (after start)
    std::string base_url() const;  // "http://127.0.0.1:8080/v1"

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Whether two keys are equal, in time that depends only on their lengths.
bool same_key(std::string_view a, std::string_view b);

}  // namespace ember::server
