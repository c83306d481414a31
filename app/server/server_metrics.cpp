// SPDX-License-Identifier: MIT
// ServerMetrics: counters and their Prometheus rendering.
#include "server_metrics.h"

#include <sstream>

namespace ember::server {

void ServerMetrics::request_finished(const GenerationStats* stats) {
    --running_;
    if (!stats) {
        ++errors_;
        return;
    }
    std::lock_guard lock(mutex_);
    prompt_tokens_ += stats->prompt_tokens;
    cached_tokens_ += stats->reused_tokens;
    generated_tokens_ += stats->generated_tokens;
    drafted_tokens_ += stats->drafted_tokens;
    accepted_tokens_ += stats->accepted_tokens;
    prompt_seconds_ += stats->prefill_seconds;
    decode_seconds_ += stats->decode_seconds;
    if (stats->generated_tokens > 0) last_tokens_per_second_ = stats->decode_tokens_per_second();
}

std::string ServerMetrics::render(const std::string& model_id) const {
    std::ostringstream out;
    auto metric = [&](const char* name, const char* type, const char* help, double value) {
        out << "# HELP ember_" << name << " " << help << "\n# TYPE ember_" << name << " " << type << "\nember_" << name
            << "{model=\"" << model_id << "\"} " << value << "\n";
    };
    std::lock_guard lock(mutex_);
    metric("requests_total", "counter", "Generation requests admitted.", double(requests_.load()));
    metric("request_errors_total", "counter", "Requests refused or failed.", double(errors_.load()));
    metric("queue_length", "gauge", "Requests waiting for the engine.", double(queued_.load()));
    metric("requests_running", "gauge", "Requests generating now.", double(running_.load()));
    metric("prompt_tokens_total", "counter", "Prompt tokens of finished requests.", double(prompt_tokens_));
    metric("prompt_tokens_cached_total", "counter", "Prompt tokens reused from the previous request.",
           double(cached_tokens_));
    metric("generated_tokens_total", "counter", "Tokens generated.", double(generated_tokens_));
    metric("prompt_seconds_total", "counter", "Seconds spent on prompt processing.", prompt_seconds_);
    metric("decode_seconds_total", "counter", "Seconds spent generating.", decode_seconds_);
    metric("prompt_tokens_per_second", "gauge", "Prompt tokens per second, over all requests.",
           prompt_seconds_ > 0 ? double(prompt_tokens_ - cached_tokens_) / prompt_seconds_ : 0);
    metric("generated_tokens_per_second", "gauge", "Generated tokens per second, over all requests.",
           decode_seconds_ > 0 ? double(generated_tokens_) / decode_seconds_ : 0);
    metric("last_generated_tokens_per_second", "gauge", "Generation speed of the last request.",
           last_tokens_per_second_);
    metric("draft_tokens_total", "counter", "Tokens drafted by speculative decoding.", double(drafted_tokens_));
    metric("draft_accepted_tokens_total", "counter", "Drafted tokens accepted.", double(accepted_tokens_));
    metric("draft_acceptance_ratio", "gauge", "Accepted over drafted tokens.",
           drafted_tokens_ ? double(accepted_tokens_) / double(drafted_tokens_) : 0);
    return out.str();
}

}  // namespace ember::server
