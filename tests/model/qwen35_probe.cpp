// SPDX-License-Identifier: MIT
// Test tool for the qwen35moe tests (qwen35moe_test.py): runs a model through the engine and writes raw float32
// results for comparison with tests/reference/qwen35moe_reference.py.
//   qwen35_probe MODEL OUT_DIR TOKENS [--batch N] [--mtp-steps K] [--kv f16|f32|q8_0]
// Writes OUT_DIR/logits.f32 and hidden.f32 ([T, ...], every position, the tokens fed N at a time). With
// --mtp-steps, the MTP head is fed the prompt pairs (t_k at position k, hidden_{k-1}) for k = 1..T-1, then drafts K
// tokens greedily from (argmax of the last trunk logits at position T, hidden_{T-1}): mtp_prompt.f32 ([T-1,
// n_vocab]), mtp_draft.f32 ([K, n_vocab]) and mtp_tokens.txt.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "ember/backend.h"
#include "ember/gguf.h"
#include "ember/model.h"

namespace {

void write(const std::filesystem::path& path, const std::vector<float>& data) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
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
    for (int i = 4; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--batch") batch = std::stoll(argv[i + 1]);
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
        std::vector<float> logits, hidden, all_logits, all_hidden;
        for (int64_t first = 0; first < n; first += step) {
            const auto chunk = std::span<const int32_t>(tokens).subspan(static_cast<size_t>(first),
                                                                        static_cast<size_t>(std::min(step, n - first)));
            ember::ForwardRequest r{chunk, static_cast<int32_t>(first), true};
            r.hidden = &hidden;
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
            const int64_t e = model->info().n_embd, v = model->info().n_vocab;
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
