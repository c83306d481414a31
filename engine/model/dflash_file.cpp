// SPDX-License-Identifier: MIT
// Reading and checking a DFlash draft's keys and tensors (ember/dflash_file.h).
#include "ember/dflash_file.h"

#include <limits>
#include <unordered_set>

namespace ember::model {

namespace {

constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxDim = int64_t{1} << 24;  // keeps every product of two dimensions far from overflow

[[noreturn]] void fail(const gguf::File& file, const std::string& problem) {
    throw Error(file.name() + ": " + problem);
}

std::string key_of(std::string_view name) {
    return std::string(kDraftPrefix) + std::string(name);
}

// A value read through a lambda, with the Value's own type errors turned into "<file>: key 'x' ...".
template <typename F>
auto read_key(const gguf::File& file, const std::string& key, F read) {
    try {
        return read();
    } catch (const Error& e) {
        const std::string what = e.what();
        if (what.starts_with(file.name() + ":")) throw;
        fail(file, "key '" + key + "' " + what);
    }
}

// A count: checked, present unless it has a fallback and in 1..max; as found, the value or the fallback (else 0).
int64_t count(const gguf::File& file, std::string_view name, std::optional<int64_t> fallback, int64_t max,
              DFlashKeys how) {
    const std::string key = key_of(name);
    if (how == DFlashKeys::as_found)
        return read_key(file, key, [&] { return file.get_int(key, fallback.value_or(0)); });
    const int64_t v = read_key(file, key, [&] { return fallback ? file.get_int(key, *fallback) : file.get_int(key); });
    if (v <= 0 || v > max) fail(file, "key '" + key + "' is " + std::to_string(v) + ", out of range");
    return v;
}

float positive_real(const gguf::File& file, std::string_view name, std::optional<double> fallback) {
    const std::string key = key_of(name);
    const double v =
        read_key(file, key, [&] { return fallback ? file.get_float(key, *fallback) : file.get_float(key); });
    if (!(v > 0.0) || v > std::numeric_limits<float>::max()) fail(file, "key '" + key + "' must be positive");
    return static_cast<float>(v);
}

std::string shape_text(std::span<const int64_t> shape) {
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

bool same_shape(const gguf::TensorInfo& t, const std::vector<int64_t>& want) {
    if (want.size() > static_cast<size_t>(gguf::max_dims)) return false;
    for (size_t d = 0; d < static_cast<size_t>(gguf::max_dims); ++d)
        if (t.shape[d] != (d < want.size() ? want[d] : 1)) return false;
    return true;
}

// The one reader of the hyperparameter keys (no target involved), checked for being usable numbers or as found.
void read_hparams(const gguf::File& file, DFlashInfo& info, DFlashKeys how) {
    const bool checked = how == DFlashKeys::checked;
    info.n_layer = count(file, "block_count", std::nullopt, kMaxLayers, how);
    info.n_embd = count(file, "embedding_length", std::nullopt, kMaxDim, how);
    info.n_head = count(file, "attention.head_count", std::nullopt, 4096, how);
    info.n_head_kv = count(file, "attention.head_count_kv", info.n_head, 4096, how);
    if (checked && info.n_head % info.n_head_kv != 0)
        fail(file, "key 'dflash.attention.head_count_kv' is " + std::to_string(info.n_head_kv) +
                       ", which does not divide the head count " + std::to_string(info.n_head));
    if (checked && !file.has(key_of("attention.key_length")) && info.n_embd % info.n_head != 0)
        fail(file, "key 'dflash.embedding_length' is not a multiple of the head count and no key_length is given");
    info.head_dim = count(file, "attention.key_length", info.n_head > 0 ? info.n_embd / info.n_head : 0, 4096, how);
    if (checked) {
        if (info.head_dim % 2 != 0)
            fail(file, "key 'dflash.attention.key_length' is " + std::to_string(info.head_dim) +
                           ", must be even (NeoX RoPE over the whole head)");
        const int64_t value_length = count(file, "attention.value_length", info.head_dim, 4096, how);
        if (value_length != info.head_dim)
            fail(file, "key 'dflash.attention.value_length' is " + std::to_string(value_length) +
                           ", expected the key_length " + std::to_string(info.head_dim));
    }
    info.n_ff = count(file, "feed_forward_length", std::nullopt, kMaxDim, how);
    if (checked) {
        info.eps = positive_real(file, "attention.layer_norm_rms_epsilon", std::nullopt);
        info.rope_base = positive_real(file, "rope.freq_base", 10000.0);
    }
    info.block_size = read_key(file, key_of("block_size"), [&] { return file.get_int(key_of("block_size"), 16); });
    if (!checked) return;

    if (const gguf::Value* window = file.find(key_of("attention.sliding_window"))) {
        info.sliding_window = read_key(file, key_of("attention.sliding_window"), [&] { return window->as_int(); });
        if (info.sliding_window <= 0) fail(file, "key 'dflash.attention.sliding_window' must be positive");
    }
    if (const gguf::Value* pattern = file.find(key_of("attention.sliding_window_pattern"))) {
        info.sliding_layers =
            read_key(file, key_of("attention.sliding_window_pattern"), [&] { return pattern->bool_array(); });
        if (static_cast<int64_t>(info.sliding_layers.size()) != info.n_layer)
            fail(file, "key 'dflash.attention.sliding_window_pattern' has " +
                           std::to_string(info.sliding_layers.size()) + " entries, expected dflash.block_count " +
                           std::to_string(info.n_layer));
    }
}

std::vector<int64_t> read_target_layers(const gguf::File& file) {
    const std::string key = key_of("target_layers");
    const gguf::Value& value = file.at(key);
    return read_key(file, key, [&] { return value.int_array(); });
}

struct ExpectedTensor {
    std::string name;            // without prefix
    std::vector<int64_t> shape;  // ggml order
};

std::vector<ExpectedTensor> layer_tensors(const DFlashInfo& info, int64_t i) {
    const int64_t d = info.n_embd, hd = info.head_dim, q = info.n_head * hd, kv = info.n_head_kv * hd;
    const std::string b = "blk." + std::to_string(i) + ".";
    return {{b + "attn_norm.weight", {d}},           {b + "attn_q.weight", {d, q}},
            {b + "attn_k.weight", {d, kv}},          {b + "attn_v.weight", {d, kv}},
            {b + "attn_output.weight", {q, d}},      {b + "attn_q_norm.weight", {hd}},
            {b + "attn_k_norm.weight", {hd}},        {b + "ffn_norm.weight", {d}},
            {b + "ffn_gate.weight", {d, info.n_ff}}, {b + "ffn_up.weight", {d, info.n_ff}},
            {b + "ffn_down.weight", {info.n_ff, d}}};
}

std::vector<ExpectedTensor> layer_biases(const DFlashInfo& info, int64_t i) {
    const int64_t hd = info.head_dim;
    const std::string b = "blk." + std::to_string(i) + ".";
    return {{b + "attn_q.bias", {info.n_head * hd}},
            {b + "attn_k.bias", {info.n_head_kv * hd}},
            {b + "attn_v.bias", {info.n_head_kv * hd}},
            {b + "attn_output.bias", {info.n_embd}}};
}

void check_shape(const gguf::File& file, const gguf::TensorInfo& t, const std::vector<int64_t>& shape) {
    if (!same_shape(t, shape))
        fail(file, "draft tensor '" + std::string(t.name) + "' has shape " +
                       shape_text(std::span(t.shape.data(), t.n_dims)) + ", expected " + shape_text(shape));
}

// §6 step 4.4: every required tensor with its shape, optional biases, nothing else under the prefix.
void check_tensors(const gguf::File& file, DFlashInfo& info, int64_t n_taps) {
    const std::string& p = info.prefix;
    std::unordered_set<std::string> known;
    auto require = [&](const ExpectedTensor& e) {
        const std::string name = p + e.name;
        const gguf::TensorInfo* t = file.find_tensor(name);
        if (!t) fail(file, "missing draft tensor '" + name + "'");
        check_shape(file, *t, e.shape);
        known.insert(name);
    };
    require({"fc.weight", {n_taps * info.n_embd, info.n_embd}});
    require({"enc.output_norm.weight", {info.n_embd}});
    require({"output_norm.weight", {info.n_embd}});
    for (int64_t i = 0; i < info.n_layer; ++i) {
        for (const ExpectedTensor& e : layer_tensors(info, i)) require(e);
        for (const ExpectedTensor& e : layer_biases(info, i)) {
            const std::string name = p + e.name;
            if (const gguf::TensorInfo* t = file.find_tensor(name)) {
                check_shape(file, *t, e.shape);
                known.insert(name);
                info.has_biases = true;
            }
        }
    }
    for (const gguf::TensorInfo& t : file.tensors())
        if (t.name.starts_with(p) && !known.contains(std::string(t.name)))
            fail(file, "unknown draft tensor '" + std::string(t.name) + "'");
}

}  // namespace

bool is_draft_architecture(std::string_view architecture) {
    return architecture == "dflash" || architecture == "dflash-draft";
}

bool is_standalone_draft(const gguf::File& file) {
    return is_draft_architecture(file.get_string("general.architecture", ""));
}

DFlashTarget dflash_target(const gguf::File& target) {
    const std::string arch(target.get_string("general.architecture"));
    const std::string p = arch + ".";
    DFlashTarget out;
    out.n_embd = target.get_int(p + "embedding_length");
    const int64_t block_count = target.get_int(p + "block_count");
    const int64_t nextn = target.get_int(p + "nextn_predict_layers", 0);
    if (out.n_embd <= 0 || nextn < 0 || block_count <= nextn)
        fail(target, "the target's " + p + "embedding_length, block_count or nextn_predict_layers are out of range");
    out.n_layer = block_count - nextn;
    if (const gguf::Value* tokens = target.find("tokenizer.ggml.tokens")) {
        if (tokens->type() != gguf::ValueType::ARRAY)
            fail(target, "key 'tokenizer.ggml.tokens' has type " + tokens->type_name() + ", expected array[string]");
        out.n_vocab = static_cast<int64_t>(tokens->size());
    } else if (const gguf::TensorInfo* embd = target.find_tensor("token_embd.weight")) {
        out.n_vocab = embd->shape[1];
    } else {
        fail(target, "neither tokenizer.ggml.tokens nor token_embd.weight gives the vocabulary size");
    }
    return out;
}

bool is_drafted(const gguf::File& file, const DFlashWarning& warn) {
    const gguf::DflashMark mark = gguf::dflash_mark(file);
    if (mark == gguf::DflashMark::unmarked && warn)
        warn(file.name() + ": dflash.embedded is " + (file.has("dflash.embedded") ? "not a bool" : "missing") +
             "; treating the file as drafted (it has dflash.block_count and dflash.fc.weight)");
    return mark != gguf::DflashMark::none;
}

// Why a bad mask token is an error rather than a warning.
constexpr const char* kSilentDraft = "; without it drafting would silently do nothing";

std::optional<int64_t> dflash_mask_token(const gguf::File& file, const DFlashWarning& warn) {
    auto read = [&](const char* key) -> std::optional<int64_t> {
        const gguf::Value* v = file.find(key);
        if (!v) return std::nullopt;
        if (!v->is_integer())
            fail(file, std::string("key '") + key + "' has type " + v->type_name() + ", expected an integer");
        return read_key(file, key, [&] { return v->as_int(); });
    };
    const std::optional<int64_t> own = read("dflash.mask_token_id");
    const std::optional<int64_t> tokenizer = read("tokenizer.ggml.mask_token_id");
    if (own && tokenizer && *own != *tokenizer && warn)
        warn(file.name() + ": dflash.mask_token_id " + std::to_string(*own) +
             " differs from tokenizer.ggml.mask_token_id " + std::to_string(*tokenizer) + "; using " +
             std::to_string(*own));
    return own ? own : tokenizer;
}

DFlashInfo read_dflash(const gguf::File& file, const std::string& prefix, const DFlashTarget& target,
                       const DFlashWarning& warn) {
    DFlashInfo info;
    info.prefix = prefix;
    read_hparams(file, info, DFlashKeys::checked);
    if (info.n_embd != target.n_embd)
        fail(file, "dflash.embedding_length is " + std::to_string(info.n_embd) +
                       ", expected the target's embedding length " + std::to_string(target.n_embd));
    info.target_layers = read_target_layers(file);
    if (info.target_layers.empty()) fail(file, "dflash.target_layers is empty");
    for (const int64_t j : info.target_layers)
        if (j < 1 || j > target.n_layer)
            fail(file, "dflash.target_layers entry " + std::to_string(j) + " is outside the target's layers 1.." +
                           std::to_string(target.n_layer));
    if (info.block_size < 2)
        fail(file, "dflash.block_size is " + std::to_string(info.block_size) + ", expected at least 2");
    check_tensors(file, info, static_cast<int64_t>(info.target_layers.size()));

    const std::optional<int64_t> mask = dflash_mask_token(file, warn);
    if (!mask)
        fail(file,
             std::string(prefix.empty() ? "DFlash draft has no mask token" : "drafted GGUF has no DFlash mask token") +
                 " (dflash.mask_token_id or tokenizer.ggml.mask_token_id)" + kSilentDraft);
    if (*mask < 0 || *mask >= target.n_vocab)
        fail(file, "DFlash mask token id " + std::to_string(*mask) + " is outside the vocabulary (n_vocab " +
                       std::to_string(target.n_vocab) + ")" + kSilentDraft);
    info.mask_token = static_cast<int32_t>(*mask);
    return info;
}

DFlashInfo read_dflash(const gguf::File& file, const std::string& prefix, int64_t target_n_embd, int64_t target_n_layer,
                       int64_t n_vocab, const DFlashWarning& warn) {
    return read_dflash(file, prefix, DFlashTarget{target_n_embd, target_n_layer, n_vocab}, warn);
}

std::optional<DFlashInfo> find_dflash(const gguf::File& target_or_drafted, const DFlashWarning& warn) {
    if (!is_drafted(target_or_drafted, warn)) return std::nullopt;
    return read_dflash(target_or_drafted, std::string(kDraftPrefix), dflash_target(target_or_drafted), warn);
}

DFlashInfo read_dflash_keys(const gguf::File& file, DFlashKeys how) {
    DFlashInfo info;
    info.prefix = is_standalone_draft(file) ? "" : std::string(kDraftPrefix);
    read_hparams(file, info, how);
    if (how == DFlashKeys::checked) return info;
    if (file.has(key_of("target_layers"))) info.target_layers = read_target_layers(file);
    if (const std::optional<int64_t> mask = dflash_mask_token(file);
        mask && *mask >= 0 && *mask <= std::numeric_limits<int32_t>::max())
        info.mask_token = static_cast<int32_t>(*mask);
    return info;
}

}  // namespace ember::model
