// SPDX-License-Identifier: MIT
// Cutting text into pieces with a preset's regexes (PCRE2).
#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "ember/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

namespace {

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
