// SPDX-License-Identifier: MIT
#include <chrono>
#include <fstream>
#include <sstream>

#include "ember/runtime.h"

namespace ember {

std::shared_ptr<LoadedModel> LoadedModel::load(const std::filesystem::path& path, const LoadOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<LoadedModel> m(new LoadedModel());
    m->file_ = std::make_unique<gguf::File>(gguf::File::open(path));
    m->backend_ = make_cpu_backend({options.threads});
    m->model_ = load_model(*m->file_, *m->backend_, options.progress);
    m->tokenizer_ = std::make_unique<Tokenizer>(Tokenizer::from_gguf(*m->file_));
    if (m->tokenizer_->n_vocab() < m->model_->info().n_vocab)
        throw Error(path.string() + ": the tokenizer has " + std::to_string(m->tokenizer_->n_vocab()) +
                    " tokens but the embedding table has " + std::to_string(m->model_->info().n_vocab) + " rows");

    if (options.chat_template_file) {
        std::ifstream in(*options.chat_template_file, std::ios::binary);
        if (!in) throw Error(options.chat_template_file->string() + ": cannot open the chat template");
        std::stringstream source;
        source << in.rdbuf();
        m->template_ = chat::Template::parse(source.str(), options.chat_template_file->string());
    } else if (std::optional<std::string> source = chat::template_from_gguf(*m->file_)) {
        // A template Ember cannot parse must not keep the model from loading: raw generation still works, and
        // chat() reports the problem.
        try {
            m->template_ = chat::Template::parse(std::move(*source), path.string() + ": tokenizer.chat_template");
        } catch (const Error& e) {
            m->template_error_ = e.what();
        }
    }
    m->load_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return m;
}

std::string_view stop_reason_name(StopReason reason) {
    switch (reason) {
        case StopReason::end_of_generation: return "end_of_generation";
        case StopReason::max_tokens: return "max_tokens";
        case StopReason::stop_string: return "stop_string";
        case StopReason::cancelled: return "cancelled";
        case StopReason::context_full: return "context_full";
    }
    return "unknown";
}

}  // namespace ember
