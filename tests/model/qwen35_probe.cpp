// SPDX-License-Identifier: MIT
// Test tool for the qwen35moe tests (qwen35moe_test.py): runs a model through the engine and writes raw float32
// results for comparison with tests/reference/qwen35moe_reference.py.
//   qwen35_probe MODEL OUT_DIR TOKENS [--batch N] [--mtp-steps K] [--kv f16|f32|q8_0] [--embed FIRST:ROWS.f32]
//                [--rope THW.i32]
// --embed: rows FIRST.. take the float32 embeddings of the file (an image, [n, n_embd]) instead of their tokens';
// --rope: the M-RoPE (t, h, w) of every token, int32 axis-major ([t...][h...][w...]).
// Writes OUT_DIR/logits.f32 and hidden.f32 ([T, ...], every position, the tokens fed N at a time). With
// --mtp-steps, the MTP head is fed the prompt pairs (t_k at position k, hidden_{k-1}) for k = 1..T-1, then drafts K
// tokens greedily from (argmax of the last trunk logits at position T, hidden_{T-1}): mtp_prompt.f32 ([T-1,
// n_vocab]), mtp_draft.f32 ([K, n_vocab]) and mtp_tokens.txt.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "backend/backend.h"
#include "ember/gguf.h"
#include "model/model.h"

namespace {

void write(const std::filesystem::path& path, const std::vector<float>& data) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
}

template <typename T>
std::vector<T> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw ember::Error(path + ": cannot open");
    std::vector<T> data(static_cast<size_t>(in.tellg()) / sizeof(T));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(T)));
    return data;
}

int32_t argmax(std::span<const float> v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::cerr << "usage: qwen35_probe MODEL OUT_DIR TOKENS [--batch N] [--mtp-steps K] [--kv TYPE]\n";
        return 2;
    }
    int64_t batch = 0, mtp_steps = 0;
    ember::KvCacheType kv = ember::KvCacheType::f32;
    std::string embed_arg, rope_arg;
    for (int i = 4; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--batch") batch = std::stoll(argv[i + 1]);
        else if (a == "--embed")
            embed_arg = argv[i + 1];
        else if (a == "--rope")
            rope_arg = argv[i + 1];
        else if (a == "--mtp-steps") mtp_steps = std::stoll(argv[i + 1]);
        else if (a == "--kv") kv = std::string(argv[i + 1]) == "f16" ? ember::KvCacheType::f16
                                   : std::string(argv[i + 1]) == "q8_0" ? ember::KvCacheType::q8_0
                                                                        : ember::KvCacheType::f32;
    }
    try {
        std::vector<int32_t> tokens;
        for (std::string s = argv[3]; !s.empty();) {
            const size_t comma = s.find(',');
            tokens.push_back(std::stoi(s.substr(0, comma)));
            s = comma == std::string::npos ? "" : s.substr(comma + 1);
        }
        const ember::gguf::File file = ember::gguf::File::open(argv[1]);
        auto backend = ember::make_cpu_backend({2});
        auto model = ember::load_model(file, *backend);
        const int64_t n = static_cast<int64_t>(tokens.size());
        const int64_t step = batch > 0 ? batch : n;
        ember::StateOptions so;
        so.n_ctx = n + mtp_steps + 8;
        so.kv_type = kv;
        auto state = model->create_state(so);
        const int64_t e = model->info().n_embd;
        std::vector<float> image;
        int64_t image_first = 0, image_rows = 0;
        if (!embed_arg.empty()) {
            image_first = std::stoll(embed_arg.substr(0, embed_arg.find(':')));
            image = read_file<float>(embed_arg.substr(embed_arg.find(':') + 1));
            image_rows = static_cast<int64_t>(image.size()) / e;
        }
        const std::vector<int32_t> thw = rope_arg.empty() ? std::vector<int32_t>() : read_file<int32_t>(rope_arg);
        std::vector<float> logits, hidden, all_logits, all_hidden;
        for (int64_t first = 0; first < n; first += step) {
            const int64_t len = std::min(step, n - first);
            const auto chunk =
                std::span<const int32_t>(tokens).subspan(static_cast<size_t>(first), static_cast<size_t>(len));
            ember::ForwardRequest r{chunk, static_cast<int32_t>(first), true};
            r.hidden = &hidden;
            // This chunk's share of the image rows and of the M-RoPE positions.
            std::vector<ember::ForwardRequest::EmbeddedRows> rows;
            const int64_t lo = std::max(first, image_first), hi = std::min(first + len, image_first + image_rows);
            if (lo < hi)
                rows.push_back({lo - first, hi - lo,
                                std::span<const float>(image).subspan(static_cast<size_t>((lo - image_first) * e),
                                                                      static_cast<size_t>((hi - lo) * e))});
            r.embedded = rows;
            std::vector<int32_t> chunk_thw;
            for (int64_t axis = 0; axis < 3 && !thw.empty(); ++axis)
                chunk_thw.insert(chunk_thw.end(), thw.begin() + axis * n + first, thw.begin() + axis * n + first + len);
            r.rope_positions = chunk_thw;
            model->forward(*state, r, logits);
            all_logits.insert(all_logits.end(), logits.begin(), logits.end());
            all_hidden.insert(all_hidden.end(), hidden.begin(), hidden.end());
        }
        const std::filesystem::path out = argv[2];
        write(out / "logits.f32", all_logits);
        write(out / "hidden.f32", all_hidden);

        if (mtp_steps > 0) {
            const ember::MtpHead* mtp = model->mtp();
            if (!mtp) throw ember::Error(file.name() + ": the model has no MTP head");
            const int64_t v = model->info().n_vocab;
            auto mstate = mtp->create_state(so);
            std::vector<float> mlogits, mhidden;
            // Prompt rows k = 1..n-1: (t_k, hidden_{k-1}).
            mtp->forward(*mstate, std::span(tokens).subspan(1), std::span(all_hidden).first(static_cast<size_t>((n - 1) * e)),
                         1, mlogits, mhidden);
            write(out / "mtp_prompt.f32", mlogits);
            int32_t token = argmax(std::span(all_logits).subspan(static_cast<size_t>((n - 1) * v), static_cast<size_t>(v)));
            std::vector<float> h(all_hidden.end() - e, all_hidden.end());
            std::vector<float> drafts;
            std::ofstream ids(out / "mtp_tokens.txt");
            for (int64_t s = 0; s < mtp_steps; ++s) {
                const int32_t one[1] = {token};
                mtp->forward(*mstate, one, h, static_cast<int32_t>(n + s), mlogits, mhidden);
                drafts.insert(drafts.end(), mlogits.begin(), mlogits.end());
                token = argmax(mlogits);
                h = mhidden;
                ids << token << "\n";
            }
            write(out / "mtp_draft.f32", drafts);
        }
    } catch (const ember::Error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
