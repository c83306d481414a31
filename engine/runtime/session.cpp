// SPDX-License-Identifier: MIT
#include <algorithm>
#include <chrono>

#include "ember/runtime.h"
#include "runtime/sampler.h"
#include "runtime/stop_strings.h"

namespace ember {

namespace {

using Clock = std::chrono::steady_clock;

// Prefill positions between the recurrent-state checkpoints taken along a long prompt.
constexpr size_t kCheckpointInterval = 2048;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
    const size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

// Routes decoded text through stop strings and, for chat turns, the reasoning/content parser, into the result and
// the caller's callback.
class OutputRouter {
public:
    OutputRouter(GenerationResult& result, const StreamCallback& callback, std::vector<std::string> stops,
                 std::optional<chat::ParserOptions> parser)
        : result_(result), callback_(callback), stops_(std::move(stops)) {
        if (parser) parser_.emplace(*parser);
    }

    // Returns false when the caller asked to stop.
    bool push(std::string_view text) { return route(stops_.push(text)); }
    bool finish() {
        bool go_on = route(stops_.flush());
        if (parser_) go_on = emit(parser_->finish()) && go_on;
        return go_on;
    }
    bool hit_stop_string() const { return stops_.stopped(); }

private:
    bool route(const std::string& text) {
        if (text.empty()) return true;
        if (parser_) return emit(parser_->push(text));
        return emit(chat::ParsedDelta{{}, text, {}});
    }
    bool emit(chat::ParsedDelta delta) {
        if (delta.content.empty() && delta.reasoning.empty() && delta.tool_calls.empty()) return true;
        result_.content += delta.content;
        result_.reasoning += delta.reasoning;
        result_.tool_calls.insert(result_.tool_calls.end(), delta.tool_calls.begin(), delta.tool_calls.end());
        if (!callback_) return true;
        return callback_(StreamChunk{std::move(delta.content), std::move(delta.reasoning), std::move(delta.tool_calls),
                                     static_cast<int64_t>(result_.tokens.size())});
    }

    GenerationResult& result_;
    const StreamCallback& callback_;
    runtime::StopStringFilter stops_;
    std::optional<chat::OutputParser> parser_;
};

}  // namespace

Session::Session(std::shared_ptr<const LoadedModel> model, const SessionOptions& options) : model_(std::move(model)) {
    const int64_t n_ctx = std::clamp<int64_t>(options.n_ctx, 16, model_->info().n_ctx_train);
    StateOptions so;
    so.n_ctx = n_ctx;
    so.kv_type = options.kv_type;
    state_ = model_->model().create_state(so);
}

Session::~Session() = default;

int64_t Session::n_ctx() const { return state_->capacity(); }
size_t Session::memory_bytes() const { return state_->memory_bytes(); }
void Session::cancel() { cancel_.store(true, std::memory_order_relaxed); }

void Session::reset() {
    state_->truncate(0);
    cached_.clear();
}

void Session::prefill(std::span<const int32_t> prompt, GenerationStats& stats, std::vector<float>& logits) {
    if (prompt.empty()) throw Error("the prompt is empty");
    if (static_cast<int64_t>(prompt.size()) >= n_ctx())
        throw Error("context full: the prompt has " + std::to_string(prompt.size()) +
                    " tokens and the context holds " + std::to_string(n_ctx()));
    // Reuse what the state already holds; at least the last prompt token is recomputed for its logits.
    const size_t wanted = std::min(common_prefix(cached_, prompt), prompt.size() - 1);
    const size_t reuse = static_cast<size_t>(state_->truncate(static_cast<int64_t>(wanted)));
    cached_.resize(reuse);
    stats.prompt_tokens = static_cast<int64_t>(prompt.size());
    stats.reused_tokens = static_cast<int64_t>(reuse);

    const auto start = Clock::now();
    const size_t batch = static_cast<size_t>(model_->model().max_batch());
    for (size_t first = reuse; first < prompt.size(); first += batch) {
        if (cancel_.load(std::memory_order_relaxed)) break;
        const auto chunk = prompt.subspan(first, std::min(batch, prompt.size() - first));
        model_->model().forward(*state_, {chunk, static_cast<int32_t>(first), false}, logits);
        cached_.insert(cached_.end(), chunk.begin(), chunk.end());
        stats.prefilled_tokens += static_cast<int64_t>(chunk.size());
        // Recurrent models keep sparse checkpoints along long prompts, and one where the prompt ends (the next
        // turn of a chat shares at least that much).
        if (cached_.size() < prompt.size() && cached_.size() % kCheckpointInterval < chunk.size()) state_->checkpoint();
    }
    if (cached_.size() == prompt.size()) state_->checkpoint();
    stats.prefill_seconds = seconds_since(start);
}

GenerationResult Session::run(std::span<const int32_t> prompt, const GenerationOptions& options,
                              const StreamCallback& on_chunk, std::optional<chat::ParserOptions> parser) {
    cancel_.store(false, std::memory_order_relaxed);
    GenerationResult result;
    std::vector<float> logits;
    prefill(prompt, result.stats, logits);
    if (cached_.size() < prompt.size()) {  // cancelled during prefill
        result.stop_reason = StopReason::cancelled;
        return result;
    }

    const Tokenizer& tokenizer = model_->tokenizer();
    runtime::Sampler sampler(options.sampling);
    StreamDecoder decoder(tokenizer);
    OutputRouter out(result, on_chunk, options.stop, std::move(parser));
    const auto start = Clock::now();
    result.stop_reason = StopReason::max_tokens;
    while (true) {
        if (cancel_.load(std::memory_order_relaxed)) {
            result.stop_reason = StopReason::cancelled;
            break;
        }
        if (options.max_tokens >= 0 && static_cast<int64_t>(result.tokens.size()) >= options.max_tokens) break;
        const int32_t id = sampler.sample(logits, cached_);
        if (!options.ignore_end_of_generation && tokenizer.is_end_of_generation(id)) {
            result.stop_reason = StopReason::end_of_generation;
            break;
        }
        result.tokens.push_back(id);
        ++result.stats.generated_tokens;
        if (!out.push(decoder.push(id))) {
            result.stop_reason = StopReason::cancelled;
            break;
        }
        if (out.hit_stop_string()) {
            result.stop_reason = StopReason::stop_string;
            break;
        }
        if (static_cast<int64_t>(cached_.size()) + 1 >= n_ctx()) {
            if (options.on_context_full == ContextFullPolicy::error)
                throw Error("context full: " + std::to_string(n_ctx()) +
                            " positions used; start a new conversation or allow a larger context");
            result.stop_reason = StopReason::context_full;
            break;
        }
        const int32_t one[1] = {id};
        model_->model().forward(*state_, {one, static_cast<int32_t>(cached_.size()), false}, logits);
        cached_.push_back(id);
    }
    out.push(decoder.flush());
    out.finish();
    result.stats.decode_seconds = seconds_since(start);
    return result;
}

GenerationResult Session::generate(std::span<const int32_t> prompt, const GenerationOptions& options,
                                   const StreamCallback& on_chunk) {
    return run(prompt, options, on_chunk, std::nullopt);
}

GenerationResult Session::chat(const chat::RenderRequest& conversation, const GenerationOptions& options,
                               const StreamCallback& on_chunk) {
    const chat::Template* tmpl = model_->chat_template();
    if (!tmpl) {
        const std::string& why = model_->chat_template_error();
        throw Error(why.empty() ? model_->file().name() + ": the model has no chat template; give one explicitly"
                                : why);
    }
    const Tokenizer& tokenizer = model_->tokenizer();
    chat::RenderRequest request = conversation;
    if (!request.bos_token && tokenizer.bos_id() >= 0) request.bos_token = std::string(tokenizer.token_text(tokenizer.bos_id()));
    if (!request.eos_token && tokenizer.eos_id() >= 0) request.eos_token = std::string(tokenizer.token_text(tokenizer.eos_id()));
    const std::string prompt = chat::apply_template(*tmpl, request);
    // Templates usually write the BOS text themselves; add it only where they do not.
    const bool add_bos = tokenizer.add_bos() && !(request.bos_token && prompt.starts_with(*request.bos_token));
    std::vector<int32_t> tokens = tokenizer.encode(prompt, false, true);
    if (add_bos) tokens.insert(tokens.begin(), tokenizer.bos_id());
    chat::ParserOptions parser;
    parser.starts_in_reasoning = chat::prompt_opens_reasoning(prompt, parser);
    return run(tokens, options, on_chunk, parser);
}

std::vector<float> Session::append(std::span<const int32_t> tokens) {
    if (tokens.empty()) throw Error("no tokens to evaluate");
    if (static_cast<int64_t>(cached_.size() + tokens.size()) > n_ctx())
        throw Error("context full: " + std::to_string(cached_.size() + tokens.size()) +
                    " tokens, the context holds " + std::to_string(n_ctx()));
    const size_t n_vocab = static_cast<size_t>(model_->info().n_vocab);
    std::vector<float> all;
    all.reserve(tokens.size() * n_vocab);
    std::vector<float> logits;
    const size_t batch = static_cast<size_t>(model_->model().max_batch());
    for (size_t first = 0; first < tokens.size(); first += batch) {
        const auto chunk = tokens.subspan(first, std::min(batch, tokens.size() - first));
        model_->model().forward(*state_, {chunk, static_cast<int32_t>(cached_.size()), true}, logits);
        all.insert(all.end(), logits.begin(), logits.end());
        cached_.insert(cached_.end(), chunk.begin(), chunk.end());
    }
    return all;
}

}  // namespace ember
