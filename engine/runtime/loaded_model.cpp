// SPDX-License-Identifier: MIT
// LoadedModel: the file, the backend choice, the model, tokenizer, template, drafts and projector.
#include <chrono>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "backend/backend.h"
#include "model/model.h"
#include "ember/runtime.h"
#include "runtime/drafter.h"
#include "vision/load_projector.h"

namespace ember {

std::shared_ptr<LoadedModel> LoadedModel::load(const std::filesystem::path& path, const LoadOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<LoadedModel> m(new LoadedModel());
    m->file_ = std::make_unique<gguf::File>(gguf::File::open(path));
    m->choose_backend(options);
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
    m->choose_speculation(path, options);
    if (options.mmproj) {
        if (!m->model_->takes_images())
            throw Error(path.string() + ": the model (" + m->model_->info().architecture +
                        ") cannot read images, so the projector " + options.mmproj->string() + " cannot be used");
        m->projector_file_ = std::make_unique<gguf::File>(gguf::File::open(*options.mmproj));
        m->set_projector(vision::load_projector(*m->projector_file_, *options.mmproj, *m->backend_));
        if (options.image_max_pixels > 0) m->projector_->set_max_pixels(options.image_max_pixels);
    }
    m->load_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return m;
}

LoadedModel::~LoadedModel() = default;

const ModelInfo& LoadedModel::info() const { return model_->info(); }

std::string LoadedModel::backend_name() const { return backend_->name(); }

void LoadedModel::set_projector(std::unique_ptr<vision::Projector> projector) {
    if (!model_->takes_images())
        throw Error(file_->name() + ": the model (" + model_->info().architecture +
                    ") cannot read images, so the projector " + projector->path() + " cannot be used");
    const std::string mismatch = vision::projector_mismatch(*projector, model_->info().n_embd, file_->name());
    if (!mismatch.empty()) throw Error(mismatch);
    projector_ = std::move(projector);
}

namespace {

uint64_t system_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

}  // namespace

void LoadedModel::choose_backend(const LoadOptions& options) {
    DevicePolicy policy = options.device_policy;
    if (policy.host_memory == 0) policy.host_memory = system_memory_bytes();
    if (options.backend == "cpu") {
        device_choice_ = place_on_backend("cpu", {}, {}, policy);
    } else {
        const MemoryNeeds needs = estimate_memory_needs(*file_, options.context, options.kv_type);
        std::string why_none;
        const std::vector<DeviceInfo> devices = list_devices(&why_none);
        if (options.backend == "auto") {
            device_choice_ = choose_device(devices, needs, policy);
            if (devices.empty() && !why_none.empty()) device_choice_.reason += " (" + why_none + ")";
        } else {
            device_choice_ = place_on_backend(options.backend, devices, needs, policy);
        }
    }
    backend_ = make_backend(device_choice_.backend, {options.threads});
    if (device_choice_.placement == Placement::gpu_host_experts)
        backend_ = make_host_experts_backend(std::move(backend_), make_cpu_backend({options.threads}));
    if (device_choice_.placement == Placement::cpu) device_choice_.device = backend_->name();
}

void LoadedModel::choose_speculation(const std::filesystem::path& path, const LoadOptions& options) {
    const SpeculationRequest wanted = options.speculation;
    if (wanted == SpeculationRequest::off) return;
    const bool has_mtp = model_->mtp() != nullptr;
    const bool has_dflash = options.draft_file || gguf::describe(*file_).has_dflash();
    if (wanted == SpeculationRequest::dflash || (wanted == SpeculationRequest::automatic && has_dflash)) {
        if (!has_dflash)
            throw Error(path.string() + ": speculation 'dflash' asked for, but the file has no DFlash draft");
        load_dflash(options);
        speculation_ = Speculation::dflash;
        return;
    }
    if (wanted == SpeculationRequest::mtp && !has_mtp)
        throw Error(path.string() + ": speculation 'mtp' asked for, but the model has no MTP head");
    if (has_mtp) speculation_ = Speculation::mtp;
}

void LoadedModel::load_dflash(const LoadOptions& options) {
    const gguf::File* source = file_.get();
    if (options.draft_file) {
        draft_file_ = std::make_unique<gguf::File>(gguf::File::open(*options.draft_file));
        source = draft_file_.get();
    }
    dflash_ = load_dflash_draft(*source, *model_, *backend_);
}

std::unique_ptr<runtime::Drafter> LoadedModel::make_drafter(int64_t n_ctx) const {
    if (speculation_ == Speculation::mtp)
        return runtime::buffer_observations(runtime::make_mtp_drafter(*model_->mtp(), n_ctx, model_->info().n_embd),
                                            32, 16, true);
    // A DFlash draft conditions on the whole context (the prompt included) until its drafts stop agreeing.
    if (speculation_ == Speculation::dflash)
        return runtime::buffer_observations(runtime::make_dflash_drafter(*dflash_, n_ctx), 256, 16, false);
    return nullptr;
}

std::string_view speculation_name(Speculation method) {
    switch (method) {
        case Speculation::none: return "none";
        case Speculation::mtp: return "mtp";
        case Speculation::dflash: return "dflash";
    }
    return "none";
}

SpeculationRequest parse_speculation_request(std::string_view word) {
    if (word == "auto") return SpeculationRequest::automatic;
    if (word == "off") return SpeculationRequest::off;
    if (word == "mtp") return SpeculationRequest::mtp;
    if (word == "dflash") return SpeculationRequest::dflash;
    throw Error("speculation must be auto, off, mtp or dflash, not '" + std::string(word) + "'");
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
