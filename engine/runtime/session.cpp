// SPDX-License-Identifier: MIT
// Session: prefill with prefix reuse, the generation loop with speculation, chat rendering, append.
#include <algorithm>
#include <chrono>

#include "backend/backend.h"
#include "model/model.h"
#include "ember/runtime.h"
#include "runtime/draft_controller.h"
#include "runtime/drafter.h"
#include "runtime/output_router.h"
#include "runtime/sampler.h"
#include "runtime/session_images.h"

namespace ember {

namespace {

using Clock = std::chrono::steady_clock;

// Prefill positions between the recurrent-state checkpoints taken along a long prompt.
constexpr size_t kCheckpointInterval = 2048;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Rows equal in token and content key (an image changes the prefix from its own first row).
size_t common_prefix(std::span<const int32_t> a, std::span<const uint64_t> a_keys, const runtime::PromptRows& b) {
    const size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b.tokens[i] && a_keys[i] == b.keys[i]) ++i;
    return i;
}

// The rows of a span of per-row values (n_rows rows of equal width), from row `first`.
std::span<const float> rows_from(const std::vector<float>& v, size_t n_rows, size_t first) {
    if (v.empty() || n_rows == 0) return {};
    const size_t width = v.size() / n_rows;
    return std::span<const float>(v).subspan(first * width);
}

}  // namespace

Session::Session(std::shared_ptr<const LoadedModel> model, const SessionOptions& options)
    : model_(std::move(model)), options_(options) {
    const int64_t n_ctx = std::clamp<int64_t>(options.n_ctx, 16, model_->info().n_ctx_train);
    if (options.speculate) drafter_ = model_->make_drafter(n_ctx);
    StateOptions so;
    so.n_ctx = n_ctx;
    so.kv_type = options.kv_type;
    if (drafter_) so.max_rollback = drafter_->max_draft() + 1;
    state_ = model_->model().create_state(so);
}

Session::~Session() = default;

int64_t Session::n_ctx() const { return state_->capacity(); }
size_t Session::memory_bytes() const { return state_->memory_bytes() + (drafter_ ? drafter_->memory_bytes() : 0); }
void Session::cancel() { cancel_.store(true, std::memory_order_relaxed); }
bool Session::cancelled() const {
    return cancel_.load(std::memory_order_relaxed) || (caller_cancel_ && caller_cancel_->load(std::memory_order_relaxed));
}

void Session::reset() { truncate(0); }

int64_t Session::truncate(int64_t n) {
    const int64_t kept = state_->truncate(n);
    cached_.resize(static_cast<size_t>(kept));
    cached_keys_.resize(static_cast<size_t>(kept));
    rope_next_.resize(static_cast<size_t>(kept));
    if (drafter_) drafter_->truncate(kept);
    return kept;
}

void Session::forward(std::span<const int32_t> tokens, bool all_logits, int64_t rollback, std::vector<float>& logits,
                      const runtime::PromptRows* rows, size_t first) {
    const size_t slot = cached_.size(), n = tokens.size();
    ForwardRequest request{tokens, static_cast<int32_t>(slot), all_logits};
    request.rollback = rollback;
    // Image rows and M-RoPE positions: from the prompt, or text continuing after the last cached row, whose
    // position falls behind its cache slot once an image was seen (vision-qwen3vl.md §6).
    std::vector<ForwardRequest::EmbeddedRows> embedded;
    std::vector<int32_t> rope;
    const int32_t base = slot == 0 ? 0 : rope_next_[slot - 1];
    if (rows) {
        rows->slice(first, n, embedded, rope);
    } else if (base != static_cast<int32_t>(slot)) {
        rope.resize(3 * n);
        for (size_t axis = 0; axis < 3; ++axis)
            for (size_t i = 0; i < n; ++i) rope[axis * n + i] = base + static_cast<int32_t>(i);
    }
    request.embedded = embedded;
    request.rope_positions = rope;
    if (drafter_ && drafter_->needs_hidden()) {
        request.hidden = &hidden_;
        request.all_hidden = true;
    }
    if (drafter_ && !drafter_->feature_layers().empty()) {
        request.capture_layers = drafter_->feature_layers();
        request.captured = &features_;
    }
    model_->model().forward(*state_, request, logits);
    cached_.insert(cached_.end(), tokens.begin(), tokens.end());
    for (size_t i = 0; i < n; ++i) {
        cached_keys_.push_back(rows ? rows->keys[first + i] : 0);
        rope_next_.push_back(rows ? rows->next[first + i] : base + static_cast<int32_t>(i) + 1);
    }
}

void Session::prefill(const runtime::PromptRows& prompt, GenerationStats& stats, std::vector<float>& logits) {
    if (prompt.empty()) throw Error("the prompt is empty");
    if (static_cast<int64_t>(prompt.size()) >= n_ctx())
        throw Error("context full: the prompt has " + std::to_string(prompt.size()) +
                    " tokens and the context holds " + std::to_string(n_ctx()));
    // Reuse what the state already holds; at least the last prompt token is recomputed for its logits.
    const size_t wanted = std::min(common_prefix(cached_, cached_keys_, prompt), prompt.size() - 1);
    const size_t reuse = static_cast<size_t>(truncate(static_cast<int64_t>(wanted)));
    stats.prompt_tokens = static_cast<int64_t>(prompt.size());
    stats.reused_tokens = static_cast<int64_t>(reuse);

    const auto start = Clock::now();
    const size_t batch = static_cast<size_t>(model_->model().max_batch());
    for (size_t first = reuse; first < prompt.size(); first = cached_.size()) {
        if (cancelled()) break;
        const size_t len = prompt.batch_end(first, batch) - first;
        const auto chunk = std::span<const int32_t>(prompt.tokens).subspan(first, len);
        forward(chunk, false, 0, logits, &prompt, first);
        // Drafters never see image rows: only the text after the chunk's last image row.
        const size_t text = prompt.text_after_images(first, len) - first;
        if (drafter_ && text < len)
            drafter_->observe({chunk.subspan(text), static_cast<int64_t>(first + text), rows_from(hidden_, len, text),
                               rows_from(features_, len, text)});
        stats.prefilled_tokens += static_cast<int64_t>(chunk.size());
        // Recurrent models keep sparse checkpoints along long prompts, and one where the prompt ends (the next
        // turn of a chat shares at least that much).
        if (cached_.size() < prompt.size() &&
            (cached_.size() % kCheckpointInterval < chunk.size() || prompt.checkpoint_at(cached_.size())))
            state_->checkpoint();
    }
    if (cached_.size() == prompt.size()) state_->checkpoint();
    stats.prefill_seconds = seconds_since(start);
}

GenerationResult Session::run(const runtime::PromptRows& prompt, const GenerationOptions& options,
                              const StreamCallback& on_chunk, std::optional<chat::ParserOptions> parser) {
    cancel_.store(false, std::memory_order_relaxed);
    caller_cancel_ = options.cancel;
    struct ForgetCallerFlag {
        const std::atomic<bool>*& flag;
        ~ForgetCallerFlag() { flag = nullptr; }
    } forget{caller_cancel_};
    GenerationResult result;
    std::vector<float> logits;
    prefill(prompt, result.stats, logits);
    if (cached_.size() < prompt.size()) {  // cancelled during prefill
        result.stop_reason = StopReason::cancelled;
        return result;
    }

    const Tokenizer& tokenizer = model_->tokenizer();
    runtime::Sampler sampler(options.sampling);
    // Harmony's headers are special tokens (<|channel|>, <|message|>, ...): its parser reads them as text.
    const bool harmony = parser && parser->format == chat::OutputFormat::harmony;
    StreamDecoder decoder(tokenizer, harmony);
    runtime::OutputRouter out(result, on_chunk, options.stop, std::move(parser));
    std::optional<runtime::DraftController> controller;
    if (drafter_) {
        controller.emplace(drafter_->max_draft(), drafter_->start_draft(), options_.draft_length);
        result.stats.speculation = drafter_->method();
    }
    const int64_t vocab = model_->info().n_vocab;
    const auto start = Clock::now();
    bool done = false;
    const std::unique_ptr<TokenConstraint::State> constraint =
        options.constraint ? options.constraint->start() : nullptr;
    // The sampler's draw, within the constraint when there is one (end tokens only where the output is complete).
    auto pick = [&](std::span<float> row, std::span<const int32_t> recent) -> int32_t {
        if (!constraint) return sampler.sample(row, recent);
        const int32_t id = sampler.sample_allowed(row, recent, [&](int32_t t) {
            return tokenizer.is_end_of_generation(t) ? constraint->complete() : constraint->allows(t);
        });
        if (id >= 0 && !tokenizer.is_end_of_generation(id)) constraint->accept(id);
        return id;
    };

    // Accepts the next token into the output; false when the generation ends here (the token is then dropped if
    // it is an end token, or kept as the last output token).
    auto consume = [&](int32_t id) {
        if (cancelled()) {
            result.stop_reason = StopReason::cancelled;
            return false;
        }
        if (id < 0) {  // the constraint allows nothing more
            result.stop_reason = StopReason::end_of_generation;
            return false;
        }
        if (options.max_tokens >= 0 && static_cast<int64_t>(result.tokens.size()) >= options.max_tokens) {
            result.stop_reason = StopReason::max_tokens;
            return false;
        }
        if (!options.ignore_end_of_generation && tokenizer.is_end_of_generation(id)) {
            result.stop_reason = StopReason::end_of_generation;
            return false;
        }
        result.tokens.push_back(id);
        ++result.stats.generated_tokens;
        if (!out.push(decoder.push(id))) {
            result.stop_reason = StopReason::cancelled;
            return false;
        }
        if (out.hit_stop_string()) {
            result.stop_reason = StopReason::stop_string;
            return false;
        }
        if (static_cast<int64_t>(cached_.size()) + 1 >= n_ctx()) {
            if (options.on_context_full == ContextFullPolicy::error)
                throw Error("context full: " + std::to_string(n_ctx()) +
                            " positions used; start a new conversation or allow a larger context");
            result.stop_reason = StopReason::context_full;
            return false;
        }
        return true;
    };

    int32_t next = pick(logits, cached_);
    std::vector<int32_t> history, batch;
    while (!done && consume(next)) {
        // Draft length for this step, within what the context and max_tokens leave.
        int n = controller && !constraint ? controller->choose() : 0;
        const int64_t room = n_ctx() - 2 - static_cast<int64_t>(cached_.size());
        n = static_cast<int>(std::clamp<int64_t>(n, 0, room));
        if (options.max_tokens >= 0)
            n = static_cast<int>(std::min<int64_t>(n, options.max_tokens - static_cast<int64_t>(result.tokens.size())));
        std::vector<int32_t> drafts;
        const auto t0 = Clock::now();
        if (n > 0) drafts = drafter_->draft(next, static_cast<int64_t>(cached_.size()), n);
        const double draft_seconds = seconds_since(t0);

        const int64_t position = static_cast<int64_t>(cached_.size());
        if (drafts.empty()) {  // a plain decode step
            const auto t1 = Clock::now();
            const int32_t one[1] = {next};
            forward(one, false, 0, logits);
            if (drafter_) drafter_->observe({one, position, hidden_, features_});
            if (controller) controller->record_plain(seconds_since(t1));
            next = pick(logits, cached_);
            continue;
        }

        // Verify [next, d_1 .. d_n] in one batch whose rows equal plain decoding (rollback form).
        batch.assign(1, next);
        batch.insert(batch.end(), drafts.begin(), drafts.end());
        const auto t1 = Clock::now();
        forward(batch, true, static_cast<int64_t>(batch.size()), logits);
        const double verify_seconds = seconds_since(t1);
        // y_i is the target's own sample at row i; drafts are accepted while they equal it (lossless at any
        // temperature: every emitted token is a target sample).
        history.assign(cached_.begin(), cached_.begin() + position + 1);
        int accepted = 0;
        int32_t y = 0;
        for (size_t i = 0; i < batch.size(); ++i) {
            std::span<float> row(logits.data() + i * static_cast<size_t>(vocab), static_cast<size_t>(vocab));
            y = sampler.sample(row, history);
            if (i < drafts.size() && y == drafts[i]) {
                ++accepted;
                history.push_back(y);
                continue;
            }
            break;
        }
        controller->record_speculative(static_cast<int>(drafts.size()), accepted, draft_seconds, verify_seconds);
        drafter_->limit_context(accepted == 0);
        result.stats.draft_steps += 1;
        result.stats.drafted_tokens += static_cast<int64_t>(drafts.size());
        result.stats.accepted_tokens += accepted;
        result.stats.last_draft_length = static_cast<int>(drafts.size());
        // Emit the accepted drafts; the rows kept are [next, accepted drafts consumed so far].
        int kept_rows = accepted + 1;
        for (int j = 0; j < accepted; ++j) {
            if (!consume(drafts[static_cast<size_t>(j)])) {
                kept_rows = j + 1;
                done = true;
                break;
            }
        }
        truncate(position + kept_rows);
        if (drafter_) {
            const int64_t e = model_->info().n_embd;
            const size_t f = drafter_->feature_layers().size() * static_cast<size_t>(e);
            drafter_->observe({std::span(batch).first(static_cast<size_t>(kept_rows)), position,
                               hidden_.empty() ? std::span<const float>() : std::span<const float>(hidden_).first(kept_rows * e),
                               features_.empty() ? std::span<const float>() : std::span<const float>(features_).first(kept_rows * f)});
        }
        next = y;
    }
    out.push(decoder.flush());
    out.finish();
    result.stats.decode_seconds = seconds_since(start);
    return result;
}

GenerationResult Session::generate(std::span<const int32_t> prompt, const GenerationOptions& options,
                                   const StreamCallback& on_chunk) {
    return run(runtime::PromptRows::text(prompt), options, on_chunk, std::nullopt);
}

GenerationResult Session::chat(const chat::RenderRequest& conversation, const GenerationOptions& options,
                               const StreamCallback& on_chunk) {
    chat::ParserOptions parser;
    size_t conversation_end = 0;
    const std::vector<int32_t> tokens = render(conversation, parser, &conversation_end);
    runtime::PromptRows rows = runtime::PromptRows::text(tokens);
    rows.conversation_end = conversation_end;
    return run(rows, options, on_chunk, parser);
}

const chat::Template& Session::chat_template() const {
    const chat::Template* tmpl = model_->chat_template();
    if (!tmpl) {
        const std::string& why = model_->chat_template_error();
        throw Error(why.empty() ? model_->file().name() + ": the model has no chat template; give one explicitly"
                                : why);
    }
    return *tmpl;
}

std::string Session::apply_chat_template(chat::RenderRequest& request) const {
    const chat::Template& tmpl = chat_template();
    const Tokenizer& tokenizer = model_->tokenizer();
    if (!request.bos_token && tokenizer.bos_id() >= 0) request.bos_token = std::string(tokenizer.token_text(tokenizer.bos_id()));
    if (!request.eos_token && tokenizer.eos_id() >= 0) request.eos_token = std::string(tokenizer.token_text(tokenizer.eos_id()));
    chat::carry_reasoning_to_thinking(tmpl, request);
    return chat::apply_template(tmpl, request);
}

std::vector<int32_t> Session::encode_prompt(const std::string& prompt, const chat::RenderRequest& request) const {
    const Tokenizer& tokenizer = model_->tokenizer();
    std::vector<int32_t> tokens = tokenizer.encode(prompt, false, true);
    // Templates usually write the BOS text themselves; add it only where they do not.
    if (tokenizer.add_bos() && !(request.bos_token && prompt.starts_with(*request.bos_token)))
        tokens.insert(tokens.begin(), tokenizer.bos_id());
    return tokens;
}

std::vector<int32_t> Session::render(const chat::RenderRequest& conversation, chat::ParserOptions& parser,
                                     size_t* conversation_end) const {
    chat::RenderRequest request = conversation;
    const std::string prompt = apply_chat_template(request);
    const std::vector<int32_t> tokens = encode_prompt(prompt, request);
    parser = chat::parser_options_for(chat_template(), prompt);
    if (conversation_end && model_->info().recurrent && request.add_generation_prompt) {
        request.add_generation_prompt = false;
        const std::string without = chat::apply_template(chat_template(), request);
        if (without.size() < prompt.size() && prompt.starts_with(without)) {
            // Tokens can merge across the boundary: the end is where the two tokenizations part.
            const std::vector<int32_t> head = encode_prompt(without, request);
            const auto [a, b] = std::mismatch(tokens.begin(), tokens.end(), head.begin(), head.end());
            *conversation_end = static_cast<size_t>(a - tokens.begin());
        }
    }
    return tokens;
}

GenerationResult Session::continue_last_message(const chat::RenderRequest& conversation,
                                                const GenerationOptions& options, const StreamCallback& on_chunk) {
    const auto& messages = conversation.messages;
    if (messages.empty() || !messages.back().contains("content") || !messages.back()["content"].is_string())
        throw Error("nothing to continue: the conversation does not end with a message");
    const std::string last = messages.back()["content"].get<std::string>();
    chat::RenderRequest request = conversation;
    request.add_generation_prompt = false;
    std::string prompt = apply_chat_template(request);
    const size_t at = last.empty() ? std::string::npos : prompt.rfind(last);
    if (at == std::string::npos)
        throw Error("cannot continue this message: the chat template does not write it back as it was");
    prompt.resize(at + last.size());
    const std::vector<int32_t> tokens = encode_prompt(prompt, request);
    return run(runtime::PromptRows::text(tokens), options, on_chunk, chat::parser_options_for(chat_template(), prompt));
}

std::vector<float> Session::append(std::span<const int32_t> tokens) {
    if (tokens.empty()) throw Error("no tokens to evaluate");
    if (static_cast<int64_t>(cached_.size() + tokens.size()) > n_ctx())
        throw Error("context full: " + std::to_string(cached_.size() + tokens.size()) +
                    " tokens, the context holds " + std::to_string(n_ctx()));
    std::vector<float> all;
    all.reserve(tokens.size() * static_cast<size_t>(model_->info().n_vocab));
    std::vector<float> logits;
    const size_t batch = static_cast<size_t>(model_->model().max_batch());
    for (size_t first = 0; first < tokens.size(); first += batch) {
        const auto chunk = tokens.subspan(first, std::min(batch, tokens.size() - first));
        const int64_t position = static_cast<int64_t>(cached_.size());
        forward(chunk, true, 0, logits);
        if (drafter_) drafter_->observe({chunk, position, hidden_, features_});
        all.insert(all.end(), logits.begin(), logits.end());
    }
    return all;
}

}  // namespace ember
