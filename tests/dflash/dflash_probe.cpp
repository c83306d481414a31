// SPDX-License-Identifier: MIT
// Test tool for dflash_draft_test.py: runs a DFlash draft through the engine and writes raw float32 results for
// comparison with tests/reference/dflash_reference.py.
//   dflash_probe TARGET DRAFT OUT_DIR TOKENS N [--batch B] [--gap A B]
// DRAFT is a drafted file (it may equal TARGET) or a standalone draft. The target runs tokens[0..T-1) (B at a time)
// and every chunk's features are injected into the draft; the draft then proposes N tokens after tokens[T-1] at
// position T-1. Writes OUT_DIR/features.f32 ([T-1, taps * n_embd]), draft_logits.f32 ([N+1, n_vocab]),
// draft_tokens.txt, and again_logits.f32: the same draft asked a second time (drafting must not change the
// context). With --gap A B the rows at positions A..B-1 are left out of the draft's context (features.f32 still
// holds every row).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "ember/gguf.h"
#include "model/model.h"

namespace {

void write(const std::filesystem::path& path, const std::vector<float>& data) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
}

std::vector<int32_t> parse_tokens(std::string s) {
    std::vector<int32_t> tokens;
    while (!s.empty()) {
        const size_t comma = s.find(',');
        tokens.push_back(std::stoi(s.substr(0, comma)));
        s = comma == std::string::npos ? "" : s.substr(comma + 1);
    }
    return tokens;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 6) {
        std::cerr << "usage: dflash_probe TARGET DRAFT OUT_DIR TOKENS N [--batch B]\n";
        return 2;
    }
    try {
        const std::vector<int32_t> tokens = parse_tokens(argv[4]);
        const int n = std::stoi(argv[5]);
        int64_t batch = 0, gap_begin = 0, gap_end = 0;
        for (int i = 6; i + 1 < argc; ++i) {
            if (std::string(argv[i]) == "--batch") batch = std::stoll(argv[++i]);
            else if (std::string(argv[i]) == "--gap" && i + 2 < argc) {
                gap_begin = std::stoll(argv[++i]);
                gap_end = std::stoll(argv[++i]);
            }
        }
        const ember::gguf::File target_file = ember::gguf::File::open(argv[1]);
        const bool same = std::filesystem::equivalent(argv[1], argv[2]);
        std::optional<ember::gguf::File> separate;
        if (!same) separate.emplace(ember::gguf::File::open(argv[2]));
        auto backend = ember::make_cpu_backend({2});
        auto target = ember::load_model(target_file, *backend);
        auto draft = ember::load_dflash_draft(same ? target_file : *separate, *target, *backend);

        const int64_t context = static_cast<int64_t>(tokens.size()) - 1;
        ember::StateOptions so;
        so.n_ctx = context + n + 8;
        so.kv_type = ember::KvCacheType::f32;
        auto target_state = target->create_state(so);
        auto draft_state = draft->create_state(so);
        const int64_t step = batch > 0 ? batch : context;
        std::vector<float> logits, captured, features;
        for (int64_t first = 0; first < context; first += step) {
            const auto chunk = std::span<const int32_t>(tokens).subspan(
                static_cast<size_t>(first), static_cast<size_t>(std::min(step, context - first)));
            ember::ForwardRequest r{chunk, static_cast<int32_t>(first)};
            r.capture_layers = draft->target_layers();
            r.captured = &captured;
            target->forward(*target_state, r, logits);
            const int64_t width = static_cast<int64_t>(captured.size() / chunk.size());
            // The parts of the chunk outside the gap, each injected at its own first position.
            const int64_t end = first + static_cast<int64_t>(chunk.size());
            for (const auto& [a, b] : {std::pair{first, std::min(end, std::max(first, gap_begin))},
                                      std::pair{std::max(first, std::min(end, gap_end)), end}}) {
                if (a >= b) continue;
                draft->inject(*draft_state,
                              std::span<const float>(captured).subspan(static_cast<size_t>((a - first) * width),
                                                                       static_cast<size_t>((b - a) * width)),
                              a);
            }
            features.insert(features.end(), captured.begin(), captured.end());
        }
        std::vector<float> draft_logits, again_logits;
        const std::vector<int32_t> drafted = draft->draft(*draft_state, tokens.back(), context, n, &draft_logits);
        draft->draft(*draft_state, tokens.back(), context, n, &again_logits);

        const std::filesystem::path out = argv[3];
        write(out / "features.f32", features);
        write(out / "draft_logits.f32", draft_logits);
        write(out / "again_logits.f32", again_logits);
        std::ofstream ids(out / "draft_tokens.txt");
        for (const int32_t t : drafted) ids << t << "\n";
    } catch (const ember::Error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
