// SPDX-License-Identifier: MIT
// Ember's public API: load a model file, open sessions on it, run chat turns or raw generations with streaming,
// stop them from another thread, read statistics. The desktop app, the CLI and the server use only this header
// (plus the data types of ember/chat.h for conversations). No Qt, no global state.
//
// Threading: a LoadedModel is shared by its sessions, which share its backend: run them on one thread (the
// app's engine worker). Only Session::cancel() may be called from any thread; it takes effect before the next
// token.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ember/chat.h"
#include "ember/constraint.h"
#include "ember/devices.h"
#include "ember/gguf.h"
#include "ember/model_info.h"
#include "ember/tokenizer.h"
#include "ember/vision.h"

namespace ember {

// How sessions draft tokens for speculative decoding, and what a load asks for.
enum class Speculation { none, mtp, dflash };
enum class SpeculationRequest { automatic, off, mtp, dflash };
// "none", "mtp", "dflash": the word the CLI, the app and JSON reports use.
std::string_view speculation_name(Speculation method);
// "auto", "off", "mtp" or "dflash"; throws ember::Error "speculation must be auto, off, mtp or dflash, not 'x'".
SpeculationRequest parse_speculation_request(std::string_view word);

struct LoadOptions {
    int threads = 0;                       // CPU threads; 0 = all
    // "auto" (the best GPU the model fits on, its experts on the host when only the rest fits, else the CPU:
    // choose_device) or make_backend's name ("cpu", "vulkan", "vulkan:N", "vulkan:NAME", "cuda", "hip").
    std::string backend = "auto";
    // The context and cache type that sessions will use, for judging whether the model fits a device.
    int64_t context = 4096;
    KvCacheType kv_type = KvCacheType::f16;
    DevicePolicy device_policy;            // AMD's preferred backend, a cap on the GPU memory used
    LoadProgress progress;                 // fraction loaded; return false to cancel (load throws LoadCancelled)
    std::optional<std::filesystem::path> chat_template_file;  // overrides the file's tokenizer.chat_template
    // Speculative decoding: automatic (an embedded DFlash draft, else the model's MTP head, else none), off, mtp or
    // dflash (an error when the file has no such draft).
    SpeculationRequest speculation = SpeculationRequest::automatic;
    // A standalone DFlash draft file to use with this model (instead of an embedded draft).
    std::optional<std::filesystem::path> draft_file;
    // The vision projector (mmproj GGUF) to pair with the model; without it, none (callers pair through
    // vision::projectors_beside). A projector that does not fit the model is a load error naming both files.
    std::optional<std::filesystem::path> mmproj;
    int64_t image_max_pixels = 0;          // > 0: lowers the projector's pixel limit
};

// The engine's own types (backend/backend.h and model/model.h are private to it).
class Backend;
class DraftModel;
class Model;
class SequenceState;

namespace runtime {
class Drafter;
class EncodingCache;
struct PromptRows;
}

// A model file opened for inference: the mapping, the backend, the architecture, tokenizer and chat template.
class LoadedModel {
public:
    // Throws ember::Error (one line naming the file and problem) or LoadCancelled.
    static std::shared_ptr<LoadedModel> load(const std::filesystem::path& path, const LoadOptions& options = {});

    const gguf::File& file() const { return *file_; }
    const ModelInfo& info() const;
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    // The backend's name for its device ("cpu", "vulkan:0 (NAME)", "cuda:0 (NAME)").
    std::string backend_name() const;
    // The engine's own view (inside the engine and its tests).
    const Model& model() const { return *model_; }
    Backend& backend() const { return *backend_; }
    // Where the model runs and why (the device, its placement, a notice when it could not go wholly on a GPU).
    const DeviceChoice& device_choice() const { return device_choice_; }
    // The chat template in use, or nullptr when the file has none and none was given.
    const chat::Template* chat_template() const { return template_ ? &*template_ : nullptr; }
    // Why the file's own template could not be used (empty when it could, or when there is none).
    const std::string& chat_template_error() const { return template_error_; }
    double load_seconds() const { return load_seconds_; }
    // What sessions draft with.
    Speculation speculation() const { return speculation_; }
    // The paired vision projector, or nullptr.
    const vision::Projector* projector() const { return projector_.get(); }
    // Pairs a projector made elsewhere (e.g. a test double) before sessions are opened; throws like
    // LoadOptions::mmproj when the model cannot read images or the projector does not fit it.
    void set_projector(std::unique_ptr<vision::Projector> projector);
    // A fresh drafter for a session with n_ctx positions (null when speculation is off).
    std::unique_ptr<runtime::Drafter> make_drafter(int64_t n_ctx) const;

    ~LoadedModel();

private:
    LoadedModel() = default;
    void choose_speculation(const std::filesystem::path& path, const LoadOptions& options);
    void load_dflash(const LoadOptions& options);
    void choose_backend(const LoadOptions& options);
    std::unique_ptr<gguf::File> file_;
    DeviceChoice device_choice_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Tokenizer> tokenizer_;
    std::optional<chat::Template> template_;
    std::string template_error_;
    double load_seconds_ = 0;
    Speculation speculation_ = Speculation::none;
    std::unique_ptr<gguf::File> draft_file_;           // a separate draft file, when given
    std::unique_ptr<DraftModel> dflash_;               // the DFlash draft model, when used
    std::unique_ptr<gguf::File> projector_file_;
    std::unique_ptr<vision::Projector> projector_;
};

struct SamplingParams {
    float temperature = 0.0f;      // <= 0: greedy
    int top_k = 40;                // <= 0: off
    float top_p = 0.95f;           // >= 1: off
    float min_p = 0.05f;           // <= 0: off
    float repeat_penalty = 1.0f;   // 1: off; applied to the last repeat_last_n tokens
    int repeat_last_n = 64;
    float presence_penalty = 0.0f;
    float frequency_penalty = 0.0f;
    uint64_t seed = 0;             // 0: a random seed
};

enum class ContextFullPolicy {
    error,  // the turn fails with "context full" (the default: nothing is dropped silently)
    stop,   // the turn ends early with StopReason::context_full
};

struct GenerationOptions {
    int max_tokens = 512;          // < 0: until end of generation or the context is full
    SamplingParams sampling;
    std::vector<std::string> stop;  // stop strings (not included in the output)
    ContextFullPolicy on_context_full = ContextFullPolicy::error;
    bool ignore_end_of_generation = false;  // keep going past end tokens (benchmarks, tests)
    // Only tokens this constraint allows are drawn (structured output); drafting is off while it is set.
    std::shared_ptr<const TokenConstraint> constraint;
    // A caller's own stop flag (e.g. a client's connection closed), checked like cancel(): before every token and
    // between prefill batches. Must outlive the call.
    const std::atomic<bool>* cancel = nullptr;
    // Chat turns with images: called before each image is encoded (done of total so far), e.g. to show "reading the
    // image…".
    std::function<void(int done, int total)> on_image;
};

enum class StopReason { end_of_generation, max_tokens, stop_string, cancelled, context_full };
std::string_view stop_reason_name(StopReason reason);

struct GenerationStats {
    Speculation speculation = Speculation::none;  // the draft method in use
    int64_t draft_steps = 0;           // draft + verify steps
    int64_t drafted_tokens = 0;
    int64_t accepted_tokens = 0;
    int last_draft_length = 0;         // the length the adaptive rule chose last
    double acceptance_rate() const { return drafted_tokens ? double(accepted_tokens) / drafted_tokens : 0; }
    // Tokens committed per draft + verify step (accepted drafts plus the target's own token).
    double mean_accepted_length() const { return draft_steps ? double(accepted_tokens + draft_steps) / draft_steps : 0; }
    int64_t prompt_tokens = 0;     // tokens of the prompt
    int64_t reused_tokens = 0;     // prompt tokens already in the state (prefix reuse)
    int64_t prefilled_tokens = 0;  // prompt tokens computed this turn
    int64_t generated_tokens = 0;
    int64_t image_tokens = 0;      // prompt tokens that are image embeddings
    double image_seconds = 0;      // time spent encoding images this turn (cached encodings cost nothing)
    double prefill_seconds = 0;
    double decode_seconds = 0;
    double prefill_tokens_per_second() const { return prefill_seconds > 0 ? prefilled_tokens / prefill_seconds : 0; }
    double decode_tokens_per_second() const { return decode_seconds > 0 ? generated_tokens / decode_seconds : 0; }
};

// One piece of streamed output. For chat turns, text is split into reasoning and content.
struct StreamChunk {
    std::string content;
    std::string reasoning;
    std::vector<chat::ToolCall> tool_calls;
    int64_t generated_tokens = 0;  // tokens generated so far in this turn
};
// Return false to stop generating (same as cancel()).
using StreamCallback = std::function<bool(const StreamChunk& chunk)>;

struct GenerationResult {
    std::string content;      // all content text
    std::string reasoning;    // all reasoning text (chat turns)
    std::vector<chat::ToolCall> tool_calls;
    std::vector<int32_t> tokens;  // generated token ids
    StopReason stop_reason = StopReason::end_of_generation;
    GenerationStats stats;
};

struct SessionOptions {
    int64_t n_ctx = 4096;          // positions; capped at the model's training context
    KvCacheType kv_type = KvCacheType::f16;
    bool speculate = true;         // draft when the model has a draft (LoadedModel::speculation())
    int draft_length = 0;          // 0: chosen per step from measurements; > 0: always this many
};

class Session {
public:
    explicit Session(std::shared_ptr<const LoadedModel> model, const SessionOptions& options = {});
    ~Session();

    // Renders the conversation with the chat template, reuses the longest prefix already computed, generates the
    // assistant's reply. Throws ember::Error on bad input (no template, context full under the error policy).
    GenerationResult chat(const chat::RenderRequest& conversation, const GenerationOptions& options,
                          const StreamCallback& on_chunk = {});
    // The same with the images of the conversation, in the order of their placeholders in the rendered prompt
    // (content parts {"type": "image"}). Each placeholder run expands to the image's token count; the
    // embeddings replace those rows, with M-RoPE positions (../specs/vision-qwen3vl.md §6). Throws ember::Error
    // when the model has no projector, or the placeholders and images differ in number.
    GenerationResult chat(const chat::RenderRequest& conversation, std::span<const vision::Image> images,
                          const GenerationOptions& options, const StreamCallback& on_chunk = {});
    // Continues the conversation's last message where its text stops ("continue this answer"): the conversation
    // rendered without a generation prompt and cut right after that text, then generation with the output parser
    // set up for where the cut prompt stands. Throws ember::Error when the conversation does not end with a message
    // with text, or when the template does not write that text back as it was.
    GenerationResult continue_last_message(const chat::RenderRequest& conversation, const GenerationOptions& options,
                                           const StreamCallback& on_chunk = {});
    // Plain continuation of a token prompt (no template).
    GenerationResult generate(std::span<const int32_t> prompt, const GenerationOptions& options,
                              const StreamCallback& on_chunk = {});
    // Runs `tokens` after those the session holds and returns the logits of each ([n_tokens, n_vocab],
    // row-major). With reset() first, this evaluates a sequence from scratch.
    std::vector<float> append(std::span<const int32_t> tokens);

    // Thread-safe: the running generation stops before its next token (prefill stops between batches).
    void cancel();
    // Forgets the conversation (the next turn prefills from scratch).
    void reset();

    const std::vector<int32_t>& cached_tokens() const { return cached_; }
    int64_t n_ctx() const;
    size_t memory_bytes() const;

private:
    // Brings the state to `prompt` (reusing the common prefix) and returns the last position's logits.
    void prefill(const runtime::PromptRows& prompt, GenerationStats& stats, std::vector<float>& logits);
    // Runs tokens at the end of the state and keeps the drafter in step; rollback: see ForwardRequest. With
    // `rows`, the tokens are rows [first, first + n) of that prompt (image rows, M-RoPE positions); otherwise text
    // continuing the cached rows.
    void forward(std::span<const int32_t> tokens, bool all_logits, int64_t rollback, std::vector<float>& logits,
                 const runtime::PromptRows* rows = nullptr, size_t first = 0);
    // Cuts the state (and the drafter) back to n positions; returns what was kept.
    int64_t truncate(int64_t n);
    GenerationResult run(const runtime::PromptRows& prompt, const GenerationOptions& options,
                         const StreamCallback& on_chunk, std::optional<chat::ParserOptions> parser);
    // The conversation through the chat template, tokenized; sets where the reply starts (reasoning or not).
    // Recurrent models: *conversation_end receives how many of the tokens render the conversation without the
    // generation prompt (0 when unknown), where prefill keeps a checkpoint: the next turn renders this turn's
    // reply differently from the generation prompt, so its common prefix ends about there, and a recurrent state
    // can only come back to a checkpoint.
    std::vector<int32_t> render(const chat::RenderRequest& conversation, chat::ParserOptions& parser,
                                size_t* conversation_end = nullptr) const;
    // The model's chat template (throws when there is none).
    const chat::Template& chat_template() const;
    // Fills the tokenizer's BOS and EOS texts into `request` where it has none, carries reasoning into the template's
    // thinking field, and renders it.
    std::string apply_chat_template(chat::RenderRequest& request) const;
    // A rendered prompt as token ids, with the BOS token where the tokenizer wants one and the text does not start
    // with it.
    std::vector<int32_t> encode_prompt(const std::string& prompt, const chat::RenderRequest& request) const;

    std::shared_ptr<const LoadedModel> model_;
    SessionOptions options_;
    std::unique_ptr<SequenceState> state_;
    std::unique_ptr<runtime::Drafter> drafter_;
    std::vector<float> hidden_, features_;  // the last forward's rows for the drafter
    std::vector<int32_t> cached_;  // tokens whose results are in state_
    std::vector<uint64_t> cached_keys_;  // per cached row: 0, or the content key of the image it is a row of
    std::vector<int32_t> rope_next_;     // per cached row: the text position of the row after it (M-RoPE)
    std::unique_ptr<runtime::EncodingCache> encodings_;  // image encodings of this session (bounded)
    std::atomic<bool> cancel_{false};
    const std::atomic<bool>* caller_cancel_ = nullptr;  // GenerationOptions::cancel of the running call
    bool cancelled() const;
};

}  // namespace ember
