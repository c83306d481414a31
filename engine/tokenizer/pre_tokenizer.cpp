// SPDX-License-Identifier: MIT
#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "ember/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

namespace {

// GPT-2's pattern, also the one Hugging Face's ByteLevel pre-tokenizer runs when use_regex is true.
constexpr std::string_view kGpt2 = R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";

constexpr std::string_view kLlama3 = R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})re"
                                     R"re(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Llama 3's pattern with single digits.
constexpr std::string_view kQwen2 = R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})re"
                                    R"re(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Qwen2's pattern with combining marks joined to letters (Qwen3.5 / Qwen3.6).
constexpr std::string_view kQwen35 = R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N})re"
                                     R"re(| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// DeepSeek LLM's tokenizer.json spells its letter class out as code point ranges (the cased letters of some
// Unicode version). Written here as escapes: NFC would silently change several of them (U+1FBE, U+2126, U+212A...).
constexpr std::string_view kDeepseekLetters =
    R"re(\s?[\x{41}-\x{5A}\x{61}-\x{7A}\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})re"
    R"re(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C})re"
    R"re(\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5})re"
    R"re(\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77})re"
    R"re(\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57})re"
    R"re(\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4})re"
    R"re(\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC})re"
    R"re(\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D})re"
    R"re(\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B})re"
    R"re(\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F})re"
    R"re(\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A})re"
    R"re(\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2})re"
    R"re(\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re";
// ASCII and full-width punctuation, curly quotes, ideographic space and punctuation.
constexpr std::string_view kDeepseekPunctuation =
    R"re(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re";
// CJK ideographs U+4E00-U+9FA5, U+0800-U+4E00 and Hangul U+AC00-U+D7FF, as the tokenizer.json writes them.
constexpr std::string_view kDeepseekCjk = R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re";

const std::vector<PreTokenizerSpec>& presets() {
    static const std::vector<PreTokenizerSpec> kPresets = {
        {"gpt-2", {}, {{kGpt2}}, false, false},
        {"llama-bpe", {"llama3"}, {{kLlama3}}, false, true},
        {"qwen2", {}, {{kQwen2}}, true, false},
        {"qwen35", {}, {{kQwen35}}, false, false},
        // Hugging Face: Digits(individual_digits) then ByteLevel with its regex.
        {"smollm", {}, {{R"re(\p{N})re"}, {kGpt2}}, false, false},
        {"deepseek-llm",
         {},
         {{R"re([\r\n])re"},
          {kDeepseekLetters},
          {kDeepseekPunctuation},
          {R"re(\s+$)re"},
          {kDeepseekCjk},
          {R"re(\p{N}+)re"}},
         false,
         false},
        {"deepseek-coder",
         {},
         {{R"re([\r\n])re"}, {R"re(\s?\p{L}+)re"}, {R"re(\s?\p{P}+)re"}, {kDeepseekCjk}, {R"re(\p{N})re"}},
         false,
         false},
        // Hugging Face: Punctuation (Rust's ASCII punctuation includes $+<=>^`|~, which Unicode calls symbols),
        // ByteLevel with its regex, then Digits and a three-digit Split, which see the byte-level text.
        {"falcon",
         {},
         {{R"re([\p{P}$+<=>^`|~]+)re"},
          {kGpt2},
          {R"re(\p{N}+)re", RegexDomain::byte_level},
          {R"re([0-9][0-9][0-9])re", RegexDomain::byte_level}},
         false,
         false},
    };
    return kPresets;
}

std::string pcre2_message(int code) {
    PCRE2_UCHAR buffer[256];
    if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return "PCRE2 error " + std::to_string(code);
    return reinterpret_cast<const char*>(buffer);
}

struct MatchDataDeleter {
    void operator()(pcre2_match_data* md) const { pcre2_match_data_free(md); }
};
using MatchData = std::unique_ptr<pcre2_match_data, MatchDataDeleter>;

}  // namespace

const PreTokenizerSpec* find_pre_tokenizer(std::string_view name) {
    for (const PreTokenizerSpec& spec : presets()) {
        if (spec.name == name) return &spec;
        for (std::string_view alias : spec.aliases)
            if (alias == name) return &spec;
    }
    return nullptr;
}

std::vector<std::string> pre_tokenizer_names() {
    std::vector<std::string> names;
    for (const PreTokenizerSpec& spec : presets()) {
        names.emplace_back(spec.name);
        for (std::string_view alias : spec.aliases) names.emplace_back(alias);
    }
    return names;
}

std::string adapt_pattern_for_pcre2(std::string_view pattern) {
    std::string out;
    out.reserve(pattern.size() + 32);
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '\\' || i + 1 == pattern.size()) {
            out += pattern[i];
            continue;
        }
        const char next = pattern[++i];
        if (next == 's') {
            out += "\\p{White_Space}";
        } else if (next == 'S') {
            out += "\\P{White_Space}";
        } else {
            out += '\\';
            out += next;
        }
    }
    return out;
}

struct PreTokenizer::CompiledStage {
    pcre2_code* code = nullptr;
    RegexDomain domain = RegexDomain::text;

    CompiledStage() = default;
    CompiledStage(const CompiledStage&) = delete;
    CompiledStage& operator=(const CompiledStage&) = delete;
    ~CompiledStage() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(const PreTokenizerSpec& spec) : spec_(&spec) {
    for (size_t s = 0; s < spec.stages.size(); ++s) {
        const std::string pattern = adapt_pattern_for_pcre2(spec.stages[s].pattern);
        int error = 0;
        PCRE2_SIZE error_offset = 0;
        auto stage = std::make_unique<CompiledStage>();
        stage->domain = spec.stages[s].domain;
        stage->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                                    &error, &error_offset, nullptr);
        if (!stage->code)
            throw Error("tokenizer: pre-tokenizer '" + std::string(spec.name) + "' regex " + std::to_string(s + 1) +
                        " does not compile at offset " + std::to_string(error_offset) + ": " + pcre2_message(error));
        // Without JIT (a build or platform that lacks it) matching still works, only slower.
        pcre2_jit_compile(stage->code, PCRE2_JIT_COMPLETE);
        stages_.push_back(std::move(stage));
    }
}

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

namespace {

// Calls on_match(begin, end) for each match of `code` in subject[0, size), left to right.
template <typename OnMatch>
void for_each_match(const pcre2_code* code, pcre2_match_data* md, std::string_view subject, std::string_view preset,
                    size_t stage, OnMatch&& on_match) {
    const auto* data = reinterpret_cast<PCRE2_SPTR>(subject.data());
    size_t start = 0;
    while (start < subject.size()) {
        int rc = pcre2_match(code, data, subject.size(), start, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
            rc = pcre2_match(code, data, subject.size(), start, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) return;
        if (rc < 0)
            throw Error("tokenizer: pre-tokenizer '" + std::string(preset) + "' regex " + std::to_string(stage + 1) +
                        " failed on a piece of " + std::to_string(subject.size()) + " bytes: " + pcre2_message(rc));
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t begin = ov[0];
        const size_t end = ov[1];
        if (end == begin) {  // none of the presets can match empty; step over a character if one ever does
            start = begin + utf8_length(static_cast<unsigned char>(subject[begin]));
            continue;
        }
        on_match(begin, end);
        start = end;
    }
}

}  // namespace

std::vector<Piece> PreTokenizer::split(std::string_view text) const {
    std::vector<Piece> pieces;
    for_each_utf8_run(
        text,
        [&](std::string_view run) {
            pieces.push_back({size_t(run.data() - text.data()), run.size(), false});
        },
        [&](std::string_view bad) {
            pieces.push_back({size_t(bad.data() - text.data()), bad.size(), true});
        });

    MatchData md(pcre2_match_data_create(1, nullptr));
    if (!md) throw Error("tokenizer: out of memory for PCRE2 match data");
    std::vector<Piece> next;
    std::string mapped;
    std::vector<uint32_t> raw_offset;  // byte-level offset -> offset in the piece
    for (size_t s = 0; s < stages_.size(); ++s) {
        const CompiledStage& stage = *stages_[s];
        next.clear();
        next.reserve(pieces.size() * 2);
        for (const Piece& piece : pieces) {
            if (piece.opaque) {
                next.push_back(piece);
                continue;
            }
            std::string_view subject = text.substr(piece.offset, piece.length);
            if (stage.domain == RegexDomain::byte_level) {
                mapped = bytes_to_byte_level(subject);
                raw_offset.assign(mapped.size() + 1, 0);
                for (size_t m = 0, k = 0; k < subject.size(); ++k) {
                    raw_offset[m] = static_cast<uint32_t>(k);
                    m += utf8_length(static_cast<unsigned char>(mapped[m]));
                }
                raw_offset[mapped.size()] = static_cast<uint32_t>(subject.size());
                subject = mapped;
            }
            const auto to_raw = [&](size_t off) { return stage.domain == RegexDomain::text ? off : raw_offset[off]; };
            size_t last = 0;  // end of what has been emitted, in subject offsets
            for_each_match(stage.code, md.get(), subject, spec_->name, s, [&](size_t begin, size_t end) {
                if (begin > last) next.push_back({piece.offset + to_raw(last), to_raw(begin) - to_raw(last), false});
                next.push_back({piece.offset + to_raw(begin), to_raw(end) - to_raw(begin), false});
                last = end;
            });
            if (last < subject.size())
                next.push_back({piece.offset + to_raw(last), to_raw(subject.size()) - to_raw(last), false});
        }
        pieces.swap(next);
    }
    return pieces;
}

}  // namespace ember::tokenizer
