// SPDX-License-Identifier: MIT
// The pre-tokenizer presets, one per tokenizer.ggml.pre name (with the other names converters give the same
// pipeline), each following the pre_tokenizer of its model family's tokenizer.json (or its tokenizer code where
// the family ships tiktoken files instead).
#include "tokenizer/pre_tokenizer.h"

namespace ember::tokenizer {

namespace {

// GPT-2's pattern, also the one Hugging Face's ByteLevel pre-tokenizer runs when use_regex is true.
constexpr std::string_view kGpt2 = R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";

// cl100k_base's pattern (GPT-4), which Llama 3, DBRX and GLM-4 use.
constexpr std::string_view kLlama3 = R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})re"
                                     R"re(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Llama 3's pattern with single digits.
constexpr std::string_view kQwen2 = R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})re"
                                    R"re(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Qwen2's pattern with combining marks joined to letters (Qwen3.5 / Qwen3.6).
constexpr std::string_view kQwen35 = R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N})re"
                                     R"re(| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// o200k_base's pattern (GPT-4o, gpt-oss, Llama 4): a word is an upper-case run then a lower-case run, so camel
// case splits, and a contraction stays on its word.
constexpr std::string_view kO200k =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)re"
    R"re(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)re"
    R"re(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Mistral's Tekken: o200k's words without contractions, single digits.
constexpr std::string_view kTekken =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)re"
    R"re(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)re"
    R"re(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Kimi K2's pattern: Han runs first, then o200k's words made of letters other than Han. Its classes are written
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]], an intersection PCRE2 lacks; since the general categories
// partition Unicode, "upper-ish and not Han" is "none of Ll, N, P, S, Z, C and not Han". sc:Han is the Script
// property, as in Oniguruma and tiktoken (PCRE2's plain \p{Han} is Script_Extensions, which takes in 、 and 。).
constexpr std::string_view kKimiK2 = R"re(\p{sc:Han}+)re"
                                     R"re(|[^\r\n\p{L}\p{N}]?[^\p{Ll}\p{N}\p{P}\p{S}\p{Z}\p{C}\p{sc:Han}]*)re"
                                     R"re([^\p{Lu}\p{Lt}\p{N}\p{P}\p{S}\p{Z}\p{C}\p{sc:Han}]+)re"
                                     R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)?)re"
                                     R"re(|[^\r\n\p{L}\p{N}]?[^\p{Ll}\p{N}\p{P}\p{S}\p{Z}\p{C}\p{sc:Han}]+)re"
                                     R"re([^\p{Lu}\p{Lt}\p{N}\p{P}\p{S}\p{Z}\p{C}\p{sc:Han}]*)re"
                                     R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)?)re"
                                     R"re(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Seed-Coder: Qwen2's pattern whose punctuation run takes no line break.
constexpr std::string_view kSeedCoder = R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1})re"
                                        R"re(| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// BLOOM's split, written in tokenizer.json as ` ?[^(\s|[.,!?…。，、।۔،])]+`: Oniguruma reads the inner [...] as a
// nested class, so the characters left out are ( ) | white space and . , ! ? … 。 ， 、 । ۔ ،. PCRE2 has no nested
// classes; the same set in one class, the non-ASCII ones as escapes.
constexpr std::string_view kBloom = R"re( ?[^()|\s.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C}]+)re";

// Chameleon's tokenizer.json: Splits that isolate its sentinel and image-code tokens, tab/newline and runs of two or
// four spaces, single digits and punctuation (\p{P} and ASCII's), before GPT-2's ByteLevel with its regex.
constexpr std::string_view kChameleonSentinel = R"re(<sentinel:[0-9]+>)re";
constexpr std::string_view kChameleonImage = R"re((IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z)re";
constexpr std::string_view kChameleonSpaces = "([\t\n]|    |  )";
constexpr std::string_view kChameleonPunctuation = R"re([\p{P}!-/:-@\[-`{-~])re";

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

// Hugging Face's Digits(individual_digits): Rust's char::is_numeric, which is \p{N}.
constexpr std::string_view kDigit = R"re(\p{N})re";

const std::vector<PreTokenizerSpec>& presets() {
    static const std::vector<PreTokenizerSpec> kPresets = {
        // GPT-2's ByteLevel with its regex; Phi-2 (CodeGen's tokenizer) and Jais have the same tokenizer.json.
        {"gpt-2", {"phi-2", "jais"}, {{kGpt2}}, false, false},
        // GPT-NeoX-20B's tokenizer.json, an NFC normalizer before GPT-2's ByteLevel, reused by MPT and OLMo (1).
        {"mpt", {"olmo"}, {{kGpt2}}, true, false},
        // Llama 3's tokenizer.json: Split with cl100k's pattern, BPE with ignore_merges.
        {"llama-bpe", {"llama3", "llama-v3"}, {{kLlama3}}, false, true},
        // The same Split without ignore_merges: DBRX's, Smaug-Llama-3's (converted before the option existed) and
        // GLM-4's (ChatGLM) tokenizer.json.
        {"dbrx", {"smaug-bpe", "chatglm-bpe", "glm4"}, {{kLlama3}}, false, false},
        // Qwen2's tokenizer.json: NFC, then Split; DeepSeek-R1-Distill-Qwen ships it unchanged.
        {"qwen2", {"deepseek-r1-qwen"}, {{kQwen2}}, true, false},
        // StableLM 2's Arcade100k and Hunyuan-A13B's tokenizer code: NFC, then tiktoken with Qwen's pattern (a piece
        // that is a token is taken whole, as ignore_merges does).
        {"stablelm2", {"hunyuan"}, {{kQwen2}}, true, true},
        {"qwen35", {}, {{kQwen35}}, false, false},
        // SmolLM's and StarCoder's tokenizer.json: Digits(individual_digits) then ByteLevel with its regex, which
        // Refact, CodeShell, EXAONE 3 and Minerva share.
        {"smollm", {"starcoder", "refact", "codeshell", "exaone", "minerva-7b"}, {{kDigit}, {kGpt2}}, false, false},
        // Command R's tokenizer.json: the same with an NFC normalizer.
        {"command-r", {}, {{kDigit}, {kGpt2}}, true, false},
        // GPT-4o's and gpt-oss's tokenizer.json (o200k_base / o200k_harmony, converted from tiktoken with
        // ignore_merges), and Llama 4's tiktoken pattern.
        {"gpt-4o", {"gpt-oss", "llama4"}, {{kO200k}}, false, true},
        // Mistral NeMo's tokenizer.json (Tekken, converted from tiktoken with ignore_merges).
        {"tekken", {}, {{kTekken}}, false, true},
        // Kimi K2's tokenization_kimi.py: tiktoken with its pattern, no normalizer.
        {"kimi-k2", {}, {{kKimiK2}}, false, true},
        // Seed-Coder's tokenizer.json.
        {"seed-coder", {}, {{kSeedCoder}}, false, false},
        // BLOOM's tokenizer.json: its Split, then ByteLevel without regex; Poro and GPT-3-Finnish have the same.
        {"bloom", {"poro-chat", "gpt3-finnish"}, {{kBloom}}, false, false},
        // Viking's tokenizer.json: BLOOM's Split, then Digits(individual_digits).
        {"viking", {}, {{kBloom}, {kDigit}}, false, false},
        {"chameleon",
         {},
         {{kChameleonSentinel}, {kChameleonImage}, {kChameleonSpaces}, {kDigit}, {kChameleonPunctuation}, {kGpt2}},
         false,
         false},
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

}  // namespace

const std::vector<PreTokenizerSpec>& pre_tokenizer_presets() {
    return presets();
}

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

}  // namespace ember::tokenizer
