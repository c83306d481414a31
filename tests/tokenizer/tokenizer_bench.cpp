// SPDX-License-Identifier: MIT
// Tokenizer throughput: loading a vocabulary, encoding (warm and cold word cache), decoding.
//
//   EMBER_FIXTURES=build-tok/fixtures build-tok/bin/tokenizer_bench
//
// The qwen2 fixture (151,669 tokens, 151,387 merges) comes from make_tokenizer_fixtures.py; the 248k case adds
// synthetic tokens and merges to it, the size of Qwen3.5/3.6's vocabulary. The text is Ember's own design notes and
// tokenizer sources plus the multilingual ggml-vocab test texts.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <unordered_set>

#include "tokenizer_test_util.h"

namespace ember::test {
namespace {

std::string bench_text() {
    static const std::string text = [] {
        std::string t;
        const std::filesystem::path root = std::filesystem::path(EMBER_SOURCE_DIR);
        for (const char* dir : {"engine/tokenizer", "engine/gguf"})
            for (const auto& entry : std::filesystem::directory_iterator(root / dir)) t += read_text_file(entry.path());
        for (const auto& entry : std::filesystem::directory_iterator(shared_data("../design")))
            t += read_text_file(entry.path());
        for (const auto& entry : std::filesystem::directory_iterator(shared_data("vocab/ggml-vocab")))
            if (entry.path().extension() == ".inp") t += read_text_file(entry.path());
        return t;
    }();
    return text;
}

const gguf::File& qwen2_file() {
    static const gguf::File file = gguf::File::open(fixture_path("tokenizer/qwen2.gguf"));
    return file;
}

// The qwen2 vocabulary grown to 248,320 tokens: each new token joins two existing ones, with its merge.
const MemoryGguf& vocab_248k() {
    static const MemoryGguf g = [] {
        const gguf::File& file = qwen2_file();
        VocabSpec spec;
        spec.pre = "qwen2";
        for (const auto& t : file.at("tokenizer.ggml.tokens").strings()) spec.tokens.emplace_back(t);
        for (const auto v : file.at("tokenizer.ggml.token_type").int_array()) spec.types.push_back(int32_t(v));
        for (const auto& m : file.at("tokenizer.ggml.merges").strings()) spec.merges.emplace_back(m);
        std::unordered_set<std::string> known(spec.tokens.begin(), spec.tokens.end());
        for (size_t a = 1000, b = 2000; spec.tokens.size() < 248320; ++a, b += 7) {
            const std::string& left = spec.tokens[a % 150000];
            const std::string& right = spec.tokens[b % 150000];
            if (!known.insert(left + right).second) continue;
            spec.merges.push_back(left + " " + right);
            spec.add(left + right);
        }
        return write_vocab(spec, "vocab-248k.gguf");
    }();
    return g;
}

void BM_LoadVocab151k(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(Tokenizer::from_gguf(qwen2_file()));
    state.counters["tokens"] = 151669;
}
BENCHMARK(BM_LoadVocab151k)->Unit(benchmark::kMillisecond);

void BM_LoadVocab248k(benchmark::State& state) {
    const MemoryGguf& g = vocab_248k();
    for (auto _ : state) benchmark::DoNotOptimize(Tokenizer::from_gguf(*g.file));
}
BENCHMARK(BM_LoadVocab248k)->Unit(benchmark::kMillisecond);

void BM_EncodeWarmCache(benchmark::State& state) {
    const Tokenizer tok = Tokenizer::from_gguf(qwen2_file());
    const std::string text = bench_text();
    size_t n_tokens = 0;
    for (auto _ : state) n_tokens = tok.encode(text, false, true).size();
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
    state.counters["tokens"] = double(n_tokens);
}
BENCHMARK(BM_EncodeWarmCache)->Unit(benchmark::kMillisecond);

void BM_EncodeColdCache(benchmark::State& state) {
    const std::string text = bench_text();
    for (auto _ : state) {
        state.PauseTiming();
        const Tokenizer tok = Tokenizer::from_gguf(qwen2_file());
        state.ResumeTiming();
        benchmark::DoNotOptimize(tok.encode(text, false, true));
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
}
BENCHMARK(BM_EncodeColdCache)->Unit(benchmark::kMillisecond);

void BM_EncodeSentencePiece(benchmark::State& state) {
    const Tokenizer tok = load_file(shared_data("vocab/ggml-vocab/ggml-vocab-llama-spm.gguf"));
    const std::string text = bench_text();
    for (auto _ : state) benchmark::DoNotOptimize(tok.encode(text, true, false));
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
}
BENCHMARK(BM_EncodeSentencePiece)->Unit(benchmark::kMillisecond);

void BM_StreamDecode(benchmark::State& state) {
    const Tokenizer tok = Tokenizer::from_gguf(qwen2_file());
    const std::string text = bench_text();
    const std::vector<int32_t> ids = tok.encode(text, false, true);
    for (auto _ : state) {
        StreamDecoder stream(tok);
        size_t bytes = 0;
        for (const int32_t id : ids) bytes += stream.push(id).size();
        benchmark::DoNotOptimize(bytes);
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(ids.size()));
}
BENCHMARK(BM_StreamDecode)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ember::test

BENCHMARK_MAIN();
