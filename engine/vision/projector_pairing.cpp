// SPDX-License-Identifier: MIT
// A model and its projector: the projection_dim check with its one-line error, the mmproj files beside a model and
// the one a model pairs with.
#include <algorithm>
#include <cctype>
#include <set>

#include "ember/gguf.h"
#include "ember/vision.h"

namespace ember::vision {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The words of a file name (without .gguf), split at '-', '.' and spaces; '_' stays inside words (Q4_K_M).
std::set<std::string> words(const std::string& stem) {
    std::set<std::string> out;
    std::string word;
    for (char c : lower(stem) + "-") {
        if (c == '-' || c == '.' || c == ' ') {
            if (!word.empty()) out.insert(word);
            word.clear();
        } else {
            word += c;
        }
    }
    return out;
}

// F16 first, then F32, then BF16 (the projector precisions converters publish), then anything else.
int precision_rank(const std::set<std::string>& w) {
    if (w.count("f16")) return 0;
    if (w.count("f32")) return 1;
    if (w.count("bf16")) return 2;
    return 3;
}

}  // namespace

std::string projector_mismatch(const Projector& projector, int64_t n_embd, const std::filesystem::path& model_path) {
    if (projector.projection_dim() == n_embd) return {};
    return projector.path() + ": this projector makes " + std::to_string(projector.projection_dim()) +
           "-wide image embeddings but " + model_path.string() + " has an embedding length of " +
           std::to_string(n_embd) + "; they are not one model";
}

// Best first: the projector sharing the most words with the model's name (its quantisation, e.g. "Q8_0" or
// "F16", or its size), then F16, F32, BF16, then by name.
std::vector<std::filesystem::path> projectors_beside(const std::filesystem::path& model_path) {
    std::vector<std::filesystem::path> found;
    std::error_code ec;
    const std::filesystem::path dir = model_path.parent_path().empty() ? "." : model_path.parent_path();
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::filesystem::path& p = it->path();
        const std::string name = lower(p.filename().string());
        if (!name.starts_with("mmproj") || !name.ends_with(".gguf")) continue;
        if (std::filesystem::equivalent(p, model_path, ec)) continue;
        if (!it->is_regular_file(ec)) continue;
        found.push_back(p);
    }
    const std::set<std::string> model_words = words(model_path.stem().string());
    struct Ranked {
        int shared, precision;
        std::filesystem::path path;
    };
    std::vector<Ranked> ranked;
    for (const auto& p : found) {
        std::set<std::string> w = words(p.stem().string());
        int shared = 0;
        for (const std::string& x : w)
            if (x != "mmproj" && model_words.count(x)) ++shared;
        ranked.push_back({shared, precision_rank(w), p});
    }
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        if (a.shared != b.shared) return a.shared > b.shared;
        if (a.precision != b.precision) return a.precision < b.precision;
        return a.path.filename() < b.path.filename();
    });
    std::vector<std::filesystem::path> out;
    for (const Ranked& r : ranked) out.push_back(r.path);
    return out;
}

std::optional<std::filesystem::path> fitting_projector_beside(const std::filesystem::path& model_path) {
    int64_t n_embd = 0;
    try {
        const gguf::File file = gguf::File::open(model_path);
        const std::string arch(file.get_string("general.architecture", ""));
        if (arch.empty() || arch == "clip") return std::nullopt;
        n_embd = file.get_int(arch + ".embedding_length", 0);
    } catch (const std::exception&) {
        return std::nullopt;  // the model's own load reports what is wrong with it
    }
    if (n_embd <= 0) return std::nullopt;
    for (const std::filesystem::path& candidate : projectors_beside(model_path)) {
        try {
            const gguf::File file = gguf::File::open(candidate);
            if (read_projector_info(file, candidate).projection_dim == n_embd) return candidate;
        } catch (const std::exception&) {
            // not a projector this engine reads: look at the next one
        }
    }
    return std::nullopt;
}

}  // namespace ember::vision
