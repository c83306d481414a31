// SPDX-License-Identifier: MIT
// OpenAiServer: routes, authentication, the hand-over of generations to the engine, JSON and SSE replies.
#include "openai_server.h"

#include <httplib.h>

#include <atomic>
#include <deque>
#include <iomanip>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "api_request.h"
#include "api_response.h"
#include "connection_watch.h"
#include "generation_job.h"
#include "server_metrics.h"

namespace ember::server {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kPollInterval = 20ms;  // how often a waiting handler checks its client

void reply(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
}

void reply_error(httplib::Response& res, const ApiError& e) {
    reply(res, e.status, e.body());
}

std::string random_hex(size_t n) {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::ostringstream s;
    while (s.tellp() < static_cast<std::streamoff>(n)) s << std::hex << std::setw(16) << std::setfill('0') << rng();
    return s.str().substr(0, n);
}

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string sse(const json& event) {
    return "data: " + event.dump() + "\n\n";
}

// Marks a connection busy with a handler (the request deadline does not apply) for as long as it lives.
class BusyConnection {
public:
    BusyConnection(ConnectionWatch& watch, const httplib::Request& req)
        : watch_(watch), address_(req.remote_addr), port_(req.remote_port) {
        watch_.handler_started(address_, port_);
    }
    ~BusyConnection() { watch_.handler_finished(address_, port_); }
    bool peer_closed() { return watch_.peer_closed(address_, port_); }

private:
    ConnectionWatch& watch_;
    std::string address_;
    int port_;
};

}  // namespace

bool same_key(std::string_view a, std::string_view b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i)
        diff |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0));
    return diff == 0;
}

struct OpenAiServer::Impl {
    Impl(EngineHost& h, ServerOptions o) : host(h), options(std::move(o)) {}

    EngineHost& host;
    ServerOptions options;
    httplib::Server http;
    std::unique_ptr<ConnectionWatch> watch;
    std::thread listener;
    int port = 0;
    std::atomic<bool> stopping{false};
    std::shared_ptr<ServerMetrics> metrics = std::make_shared<ServerMetrics>();
    uint64_t admitted = 0;  // guarded by jobs_mutex
    std::shared_ptr<std::atomic<uint64_t>> started = std::make_shared<std::atomic<uint64_t>>(0);
    std::mutex jobs_mutex;
    std::set<std::shared_ptr<GenerationJob>> jobs;  // in flight, cancelled by stop()

    void routes();
    ServedModel model_or_throw() const {
        auto m = host.served_model();
        if (!m) throw ApiError(503, "no model is loaded", "", "model_not_loaded", "server_error");
        return *m;
    }
    static json body_of(const httplib::Request& req) {
        json body = json::parse(req.body, nullptr, false);
        if (body.is_discarded()) throw ApiError(400, "the request body is not valid JSON", "", "invalid_json");
        return body;
    }
    std::shared_ptr<GenerationJob> submit(GenerationJob::Work work, const GenerationOptions& generation);
    void forget(const std::shared_ptr<GenerationJob>& job) {
        std::lock_guard lock(jobs_mutex);
        jobs.erase(job);
    }
    // Waits for the first chunk or the end; false when the client left or the server stops (job cancelled).
    bool wait_first(GenerationJob& job, BusyConnection& connection, std::deque<StreamChunk>& chunks) {
        while (!job.wait(kPollInterval, chunks) && chunks.empty()) {
            if (stopping.load() || connection.peer_closed()) {
                job.cancel();
                return false;
            }
        }
        return true;
    }
    void generate(const httplib::Request& req, httplib::Response& res, GenerationJob::Work work,
                  const GenerationOptions& generation, const StreamRequest& streaming, bool chat);
};

std::shared_ptr<GenerationJob> OpenAiServer::Impl::submit(GenerationJob::Work work,
                                                          const GenerationOptions& generation) {
    // Numbering and queueing are one step, so that the engine's order is the order of admission.
    std::lock_guard lock(jobs_mutex);
    auto job = std::make_shared<GenerationJob>(std::move(work), generation, ++admitted);
    jobs.insert(job);
    metrics->request_admitted();
    // The engine may run the job after this server is gone: it holds what it needs by shared_ptr.
    host.post([job, m = metrics, seq = started](EngineSlot* slot) {
        const bool runs = slot && !job->cancelled();
        if (runs)
            m->request_started();
        else
            m->request_dropped();
        // The metrics count the request before its reply can reach the client.
        job->run(slot, runs ? ++*seq : 0, [&](const GenerationResult* result) {
            if (runs) m->request_finished(result ? &result->stats : nullptr);
        });
    });
    return job;
}

void OpenAiServer::Impl::generate(const httplib::Request& req, httplib::Response& res, GenerationJob::Work work,
                                  const GenerationOptions& generation, const StreamRequest& streaming, bool chat) {
    auto connection = std::make_shared<BusyConnection>(*watch, req);
    const ServedModel model = model_or_throw();
    const auto job = submit(std::move(work), generation);
    const ResponseIds ids{(chat ? "chatcmpl-" : "cmpl-") + random_hex(24), model.id, unix_now()};
    std::deque<StreamChunk> chunks;
    if (!wait_first(*job, *connection, chunks)) {
        forget(job);
        throw ApiError(499, "the request was cancelled", "", "cancelled");
    }
    res.set_header("X-Ember-Queue",
                   "admitted=" + std::to_string(job->admitted()) + " started=" + std::to_string(job->started()));

    if (!streaming.stream) {
        while (!job->wait(kPollInterval, chunks)) {
            chunks.clear();
            if (stopping.load() || connection->peer_closed()) {
                job->cancel();
                forget(job);
                throw ApiError(499, "the request was cancelled", "", "cancelled");
            }
        }
        forget(job);
        if (job->error()) throw *job->error();
        const GenerationResult& r = *job->result();
        reply(res, 200,
              chat ? chat_completion(ids, r, job->queued_seconds()) : text_completion(ids, r, job->queued_seconds()));
        return;
    }

    // Streaming: an error before any output is still an ordinary error reply.
    std::deque<StreamChunk> first;
    if (chunks.empty() && job->wait(0ms, first) && job->error()) {
        forget(job);
        throw *job->error();
    }
    struct Stream {
        std::shared_ptr<GenerationJob> job;
        std::shared_ptr<BusyConnection> connection;
        std::deque<StreamChunk> chunks;
        size_t tool_calls_sent = 0;
        bool opened = false;
    };
    auto state = std::make_shared<Stream>(Stream{job, connection, std::move(chunks)});
    const bool include_usage = streaming.include_usage;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, state, ids, chat, include_usage](size_t, httplib::DataSink& sink) {
            GenerationJob& j = *state->job;
            auto send = [&](const std::string& text) {
                if (sink.write(text.data(), text.size())) return true;
                j.cancel();  // the client is gone
                return false;
            };
            if (chat && !state->opened) {
                state->opened = true;
                if (!send(sse(chat_chunk(ids, {{"role", "assistant"}, {"content", ""}}, nullptr)))) return false;
            }
            for (;;) {
                bool done = j.wait(kPollInterval, state->chunks);
                for (const StreamChunk& c : state->chunks) {
                    if (!chat) {
                        if (!c.content.empty() && !send(sse(text_chunk(ids, c.content, nullptr)))) return false;
                        continue;
                    }
                    json delta = json::object();
                    if (!c.reasoning.empty()) delta["reasoning_content"] = c.reasoning;
                    if (!c.content.empty()) delta["content"] = c.content;
                    if (!c.tool_calls.empty()) {
                        delta["tool_calls"] = tool_calls_json(c.tool_calls, ids.id, state->tool_calls_sent);
                        state->tool_calls_sent += c.tool_calls.size();
                    }
                    if (!delta.empty() && !send(sse(chat_chunk(ids, delta, nullptr)))) return false;
                }
                state->chunks.clear();
                if (done) break;
                if (stopping.load() || state->connection->peer_closed()) {
                    j.cancel();
                    return false;
                }
            }
            if (j.error()) {
                send(sse(j.error()->body()));
            } else {
                const GenerationResult& r = *j.result();
                const std::string reason = finish_reason(r.stop_reason, state->tool_calls_sent > 0);
                json last = chat ? chat_chunk(ids, json::object(), reason) : text_chunk(ids, "", reason);
                last["timings"] = timings_of(r.stats, j.queued_seconds());
                if (!send(sse(last))) return false;
                if (include_usage) {
                    json usage = chat ? chat_chunk(ids, json::object(), nullptr) : text_chunk(ids, "", nullptr);
                    usage["choices"] = json::array();
                    usage["usage"] = usage_of(r.stats);
                    if (!send(sse(usage))) return false;
                }
            }
            send("data: [DONE]\n\n");
            sink.done();
            return true;
        },
        [this, state](bool) {
            forget(state->job);
            state->connection.reset();
        });
}

void OpenAiServer::Impl::routes() {
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        watch->request_arrived(req.remote_addr, req.remote_port);
        if (options.api_key.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
        const std::string given = req.get_header_value("Authorization");
        if (given.starts_with("Bearer ") && same_key(std::string_view(given).substr(7), options.api_key))
            return httplib::Server::HandlerResponse::Unhandled;
        metrics->request_refused();
        reply_error(
            res, ApiError(401, "a valid API key is required: send 'Authorization: Bearer KEY'", "", "invalid_api_key"));
        return httplib::Server::HandlerResponse::Handled;
    });
    // Errors httplib raises itself (unknown path, oversized body, malformed HTTP) get an OpenAI error object too.
    http.set_error_handler(
        httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
            metrics->request_refused();
            std::string message = "HTTP error " + std::to_string(res.status);
            std::string code;
            if (res.status == 404) message = "no such endpoint: " + req.method + " " + req.path, code = "not_found";
            if (res.status == 413)
                message = "the request body is larger than " + std::to_string(options.max_body_bytes) + " bytes",
                code = "body_too_large";
            if (res.status == 400) message = "malformed HTTP request";
            reply_error(res, ApiError(res.status, message, "", code));
            return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        metrics->request_refused();
        std::string what = "unknown error";
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        reply_error(res, ApiError(500, "internal error: " + what, "", "", "server_error"));
    });
    // Wraps a handler: ApiError and engine errors become error replies.
    auto guarded = [this](auto handler) {
        return [this, handler](const httplib::Request& req, httplib::Response& res) {
            try {
                handler(req, res);
            } catch (const ApiError& e) {
                if (e.status != 499) metrics->request_refused();
                reply_error(res, e);
            } catch (const Error& e) {
                metrics->request_refused();
                reply_error(res, ApiError(400, e.what()));
            }
        };
    };

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        if (host.served_model())
            reply(res, 200, {{"status", "ok"}});
        else
            reply(res, 503, {{"status", "no model is loaded"}});
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        const auto m = host.served_model();
        res.set_content(metrics->render(m ? m->id : ""), "text/plain; version=0.0.4");
    });
    const auto models = guarded([this](const httplib::Request&, httplib::Response& res) {
        json data = json::array();
        if (const auto m = host.served_model())
            data.push_back({{"id", m->id},
                            {"object", "model"},
                            {"created", m->created},
                            {"owned_by", "ember"},
                            {"meta", {{"n_ctx", m->n_ctx}, {"vision", m->has_vision}}}});
        reply(res, 200, {{"object", "list"}, {"data", data}});
    });
    http.Get("/v1/models", models);
    http.Get("/models", models);

    const auto chat = guarded([this](const httplib::Request& req, httplib::Response& res) {
        const ServedModel model = model_or_throw();
        ChatRequest r = parse_chat_request(body_of(req), model);
        if (r.response_schema) check_json_schema_text(*r.response_schema, "");  // unsupported schemas: 400 now
        GenerationJob::Work work = [conversation = std::move(r.conversation), images = std::move(r.images),
                                    schema = r.response_schema](EngineSlot& slot, const GenerationOptions& o,
                                                                const StreamCallback& on_chunk) {
            GenerationOptions constrained = o;
            if (schema) constrained.constraint = make_json_schema_constraint(slot.model.tokenizer(), *schema);
            if (images) return slot.session.chat(conversation, *images, constrained, on_chunk);
            return slot.session.chat(conversation, constrained, on_chunk);
        };
        generate(req, res, std::move(work), r.options, r.streaming, true);
    });
    http.Post("/v1/chat/completions", chat);
    http.Post("/chat/completions", chat);

    const auto completions = guarded([this](const httplib::Request& req, httplib::Response& res) {
        CompletionRequest r = parse_completion_request(body_of(req));
        GenerationJob::Work work = [prompt = std::move(r.prompt)](EngineSlot& slot, const GenerationOptions& o,
                                                                  const StreamCallback& on_chunk) {
            const auto tokens = slot.model.tokenizer().encode(prompt, true, true);
            if (static_cast<int64_t>(tokens.size()) >= slot.session.n_ctx())
                throw ApiError(400,
                               "the prompt has " + std::to_string(tokens.size()) + " tokens and the context holds " +
                                   std::to_string(slot.session.n_ctx()),
                               "prompt", "context_length_exceeded");
            return slot.session.generate(tokens, o, on_chunk);
        };
        generate(req, res, std::move(work), r.options, r.streaming, false);
    });
    http.Post("/v1/completions", completions);
    http.Post("/completions", completions);
}

OpenAiServer::OpenAiServer(EngineHost& host, ServerOptions options)
    : impl_(std::make_unique<Impl>(host, std::move(options))) {}

OpenAiServer::~OpenAiServer() {
    stop();
}

void OpenAiServer::start() {
    Impl& s = *impl_;
    if (s.listener.joinable()) return;
    s.stopping = false;
    s.http.set_payload_max_length(s.options.max_body_bytes);
    s.http.set_read_timeout(s.options.io_timeout);
    s.http.set_write_timeout(s.options.io_timeout);
    s.http.set_keep_alive_timeout(5);
    const int threads = std::max(2, s.options.http_threads);
    s.http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    s.routes();
    if (s.options.port == 0) {
        s.port = s.http.bind_to_any_port(s.options.host);
        if (s.port <= 0) throw Error("cannot listen on " + s.options.host + ": no free port");
    } else if (s.http.bind_to_port(s.options.host, s.options.port)) {
        s.port = s.options.port;
    } else {
        throw Error("cannot listen on " + s.options.host + ":" + std::to_string(s.options.port) +
                    ": the address is in use or not available");
    }
    s.watch = std::make_unique<ConnectionWatch>(s.port, s.options.request_deadline);
    s.listener = std::thread([&s] { s.http.listen_after_bind(); });
}

void OpenAiServer::stop() {
    Impl& s = *impl_;
    if (!s.listener.joinable()) return;
    s.stopping = true;
    {
        std::lock_guard lock(s.jobs_mutex);
        for (const auto& job : s.jobs) job->cancel();
    }
    s.http.stop();
    s.watch->close_all();
    s.listener.join();
    s.watch.reset();
}

bool OpenAiServer::running() const {
    return impl_->listener.joinable();
}
int OpenAiServer::port() const {
    return impl_->port;
}
std::string OpenAiServer::base_url() const {
    const std::string& h = impl_->options.host;
    const std::string host = h == "0.0.0.0" ? "127.0.0.1" : h.find(':') != std::string::npos ? "[" + h + "]" : h;
    return "http://" + host + ":" + std::to_string(impl_->port) + "/v1";
}

}  // namespace ember::server
