// SPDX-License-Identifier: MIT
// Tokenizer: building one from a file's tokenizer.ggml.* keys, encode and decode.
#include <algorithm>

#include "ember/gguf.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/normalize.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"

namespace ember {

using tokenizer::ModelKind;

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581 "▁"

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

bool is_special_type(TokenType type) {
    return type == TokenType::control || type == TokenType::unknown || type == TokenType::unused;
}

std::optional<char> byte_token_value(std::string_view text) {
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
    const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = hex(text[3]), lo = hex(text[4]);
    if (hi < 0 || lo < 0) return std::nullopt;
    return static_cast<char>(hi * 16 + lo);
}

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    size_t pos = 0;
    while (true) {
        const size_t hit = text.find(from, pos);
        if (hit == std::string_view::npos) break;
        out.append(text.substr(pos, hit - pos)).append(to);
        pos = hit + from.size();
    }
    out.append(text.substr(pos));
    return out;
}

}  // namespace

Tokenizer::Impl::Impl(const gguf::File& file, tokenizer::Vocab&& loaded) : vocab(std::move(loaded)), special(vocab) {
    if (vocab.kind() == ModelKind::bpe) {
        const std::string where = tokenizer::message_prefix(file);
        if (vocab.pre().empty())
            throw Error(where +
                        "missing key 'tokenizer.ggml.pre' (byte-level BPE needs its pre-tokenizer; supported: " +
                        join(tokenizer::pre_tokenizer_names()) + ")");
        const tokenizer::PreTokenizerSpec* spec = tokenizer::find_pre_tokenizer(vocab.pre());
        if (!spec)
            throw Error(where + "tokenizer.ggml.pre '" + tokenizer::message_value(vocab.pre()) +
                        "' is not supported (supported: " + join(tokenizer::pre_tokenizer_names()) + ")");
        pre.emplace(*spec);
        bpe = std::make_unique<tokenizer::BpeModel>(file, vocab, spec->ignore_merges);
    } else {
        spm = std::make_unique<tokenizer::SpmModel>(vocab);
    }

    piece_offsets.reserve(static_cast<size_t>(vocab.size()) + 1);
    std::string piece_text;
    for (int32_t id = 0; id < vocab.size(); ++id) {
        piece_offsets.push_back(pieces.size());
        const std::string_view text = vocab.text(id);
        const TokenType type = vocab.type(id);
        if (is_special_type(type) || type == TokenType::user_defined) {
            piece_text.assign(text);  // stored as the text it stands for
        } else if (type == TokenType::byte && vocab.kind() == ModelKind::spm && byte_token_value(text)) {
            piece_text.assign(1, *byte_token_value(text));
        } else if (vocab.kind() == ModelKind::bpe) {
            piece_text = tokenizer::byte_level_to_bytes(text);
        } else {
            piece_text = replace_all(text, kSpaceMarker, " ");
        }
        pieces.insert(pieces.end(), piece_text.begin(), piece_text.end());
    }
    piece_offsets.push_back(pieces.size());

    end_of_generation = tokenizer::end_of_generation_ids(vocab);
    std::sort(end_of_generation.begin(), end_of_generation.end());
    end_of_generation.erase(std::unique(end_of_generation.begin(), end_of_generation.end()), end_of_generation.end());
}

void Tokenizer::Impl::check_id(int32_t id) const {
    if (id < 0 || id >= vocab.size())
        throw Error("tokenizer: token id " + std::to_string(id) + " is out of range (the vocabulary has " +
                    std::to_string(vocab.size()) + " tokens)");
}

void Tokenizer::Impl::encode_text(std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;
    if (spm) {
        std::string escaped;
        if (vocab.add_space_prefix) escaped.append(kSpaceMarker);
        escaped += replace_all(text, " ", kSpaceMarker);
        spm->encode(vocab, escaped, out);
        return;
    }
    std::string normalized;
    if (pre->spec().nfc) {
        normalized.reserve(text.size());
        tokenizer::for_each_utf8_run(
            text, [&](std::string_view run) { normalized += tokenizer::to_nfc(run); },
            [&](std::string_view bad) { normalized.append(bad); });
        text = normalized;
    }
    for (const tokenizer::Piece& piece : pre->split(text))
        bpe->encode_word(vocab, text.substr(piece.offset, piece.length), out);
}

void Tokenizer::Impl::append_piece(int32_t id, bool show_special, bool& at_text_start, std::string& out) const {
    check_id(id);
    const TokenType type = vocab.type(id);
    const bool strips = spm && vocab.add_space_prefix;
    if (is_special_type(type) || type == TokenType::user_defined) {
        if (show_special || type == TokenType::user_defined) out.append(piece(id));
        if (strips) at_text_start = true;
        return;
    }
    std::string_view p = piece(id);
    if (strips && at_text_start && type != TokenType::byte && !p.empty() && p.front() == ' ') p.remove_prefix(1);
    at_text_start = false;
    out.append(p);
}

// ---------------------------------------------------------------------------------------------------------------

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Tokenizer Tokenizer::from_gguf(const gguf::File& file) {
    return Tokenizer(std::make_shared<const Impl>(file, tokenizer::Vocab::load(file)));
}

std::vector<std::string> Tokenizer::supported_models() {
    return {"gpt2", "llama"};
}
std::vector<std::string> Tokenizer::supported_pre_tokenizers() {
    return tokenizer::pre_tokenizer_names();
}

int32_t Tokenizer::n_vocab() const {
    return impl_->vocab.size();
}
std::string_view Tokenizer::model() const {
    return impl_->vocab.model_name();
}
std::string_view Tokenizer::pre_tokenizer() const {
    return impl_->vocab.pre();
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
    const Impl& m = *impl_;
    std::vector<int32_t> out;
    out.reserve(text.size() / 3 + 4);
    if (add_special && m.vocab.add_bos && m.vocab.bos >= 0) out.push_back(m.vocab.bos);
    if (parse_special) {
        for (const auto& fragment : m.special.split(text)) {
            if (fragment.token >= 0) {
                out.push_back(fragment.token);
            } else {
                m.encode_text(fragment.text, out);
            }
        }
    } else {
        m.encode_text(text, out);
    }
    if (add_special && m.vocab.add_eos && m.vocab.eos >= 0) out.push_back(m.vocab.eos);
    return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
    impl_->check_id(id);
    if (is_special_type(impl_->vocab.type(id)) && !special) return {};
    return std::string(impl_->piece(id));
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool special) const {
    std::string out;
    bool at_text_start = true;
    for (const int32_t id : ids) impl_->append_piece(id, special, at_text_start, out);
    return out;
}

std::string_view Tokenizer::token_text(int32_t id) const {
    impl_->check_id(id);
    return impl_->vocab.text(id);
}

TokenType Tokenizer::token_type(int32_t id) const {
    impl_->check_id(id);
    return impl_->vocab.type(id);
}

float Tokenizer::token_score(int32_t id) const {
    impl_->check_id(id);
    return impl_->vocab.score(id);
}

std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
    return impl_->vocab.find(text);
}

int32_t Tokenizer::bos_id() const {
    return impl_->vocab.bos;
}
int32_t Tokenizer::eos_id() const {
    return impl_->vocab.eos;
}
int32_t Tokenizer::eot_id() const {
    return impl_->vocab.eot;
}
int32_t Tokenizer::eom_id() const {
    return impl_->vocab.eom;
}
int32_t Tokenizer::unk_id() const {
    return impl_->vocab.unk;
}
int32_t Tokenizer::pad_id() const {
    return impl_->vocab.pad;
}
bool Tokenizer::add_bos() const {
    return impl_->vocab.add_bos;
}
bool Tokenizer::add_eos() const {
    return impl_->vocab.add_eos;
}
bool Tokenizer::add_space_prefix() const {
    return impl_->spm && impl_->vocab.add_space_prefix;
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
    return std::binary_search(impl_->end_of_generation.begin(), impl_->end_of_generation.end(), id);
}

}  // namespace ember
