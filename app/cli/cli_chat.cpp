// SPDX-License-Identifier: MIT
// ember-cli chat -m FILE [--system TEXT] [--no-think] [--reasoning-effort E] [sampling options] [--mmproj P]
//                [--image IMG ...]
// An interactive conversation on the terminal. Ctrl-C stops the reply being generated; Ctrl-C at the prompt (or
// Ctrl-D) leaves. Reasoning is shown dimmed. "/image PATH" (or --image) attaches an image to the next message.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <pthread.h>
#include <thread>
#include <unistd.h>

#include "cli_model.h"
#include "cli_vision.h"

namespace ember::cli {

namespace {

// SIGINT is blocked in every thread and taken by this watcher with sigwait(), so the handler needs no global.
class InterruptWatcher {
public:
    explicit InterruptWatcher(Session& session) : session_(session) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        thread_ = std::thread([this, set] {
            while (true) {
                int sig = 0;
                if (sigwait(&set, &sig) != 0) return;
                if (generating_.load()) {
                    session_.cancel();
                } else {
                    std::fputs("\n", stdout);
                    std::_Exit(130);
                }
            }
        });
        thread_.detach();
    }
    void generating(bool on) { generating_.store(on); }

private:
    Session& session_;
    std::atomic<bool> generating_{false};
    std::thread thread_;
};

// The user's message: the attached images first, then the text.
nlohmann::ordered_json user_message(const std::string& text, size_t n_images) {
    if (n_images == 0) return {{"role", "user"}, {"content", text}};
    nlohmann::ordered_json parts = nlohmann::ordered_json::array();
    for (size_t i = 0; i < n_images; ++i) parts.push_back({{"type", "image"}});
    parts.push_back({{"type", "text"}, {"text", text}});
    return {{"role", "user"}, {"content", std::move(parts)}};
}

}  // namespace

int run_chat(const Args& raw) {
    const ParsedArgs args(raw,
                          join(join(join(join(model_option_specs(), sampling_option_specs()), vision_option_specs()),
                                    chat_switch_option_specs()),
                               {{"--system", ""}, {"--n-predict", "-n"}}));
    const std::vector<std::string> image_paths = vision_from_args(args).images;
    std::vector<vision::Image> pending = load_images(image_paths);  // for the next message
    auto model = load_model_from_args(args);
    require_projector(*model, image_paths);
    Session session(model, session_options_from_args(args));
    InterruptWatcher watcher(session);
    GenerationOptions options;
    options.max_tokens = static_cast<int>(args.get_int("--n-predict", -1));
    options.sampling = sampling_from_args(args);
    if (!args.has("--temp")) options.sampling.temperature = 0.7f;
    options.stop = args.all("--stop");
    options.on_context_full = ContextFullPolicy::stop;
    options.on_image = [](int done, int total) { std::fprintf(stderr, "[reading image %d of %d]\n", done + 1, total); };

    chat::RenderRequest conversation;
    if (args.has("--system")) conversation.messages.push_back({{"role", "system"}, {"content", args.get("--system")}});
    chat_switches_from_args(args, conversation.kwargs);
    const bool tty = ::isatty(STDOUT_FILENO);
    std::fprintf(stderr, "%s: chatting (Ctrl-C stops a reply, Ctrl-D leaves%s)\n", model->info().name.c_str(),
                 model->projector() ? ", /image PATH attaches an image" : "");
    std::vector<vision::Image> images;  // of the whole conversation, in order
    std::string line;
    while (true) {
        std::fputs(tty ? "\033[1m> \033[0m" : "> ", stdout);
        std::fflush(stdout);
        if (!std::getline(std::cin, line)) break;
        if (line.empty()) continue;
        if (line.starts_with("/image ")) {
            const std::string path = line.substr(7);
            try {
                if (!model->projector()) require_projector(*model, {path});
                pending.push_back(vision::load_image(path));
                std::fprintf(stderr, "[%s attached to the next message]\n", path.c_str());
            } catch (const Error& e) {
                std::fprintf(stderr, "%s\n", e.what());
            }
            continue;
        }
        conversation.messages.push_back(user_message(line, pending.size()));
        const size_t images_before = images.size();
        for (vision::Image& image : pending) images.push_back(std::move(image));
        pending.clear();
        bool in_reasoning = false;
        watcher.generating(true);
        const StreamCallback show = [&](const StreamChunk& chunk) {
            if (!chunk.reasoning.empty()) {
                if (tty && !in_reasoning) std::fputs("\033[2m", stdout);
                in_reasoning = true;
                std::fputs(chunk.reasoning.c_str(), stdout);
            }
            if (!chunk.content.empty()) {
                if (tty && in_reasoning) std::fputs("\033[0m\n", stdout);
                in_reasoning = false;
                std::fputs(chunk.content.c_str(), stdout);
            }
            std::fflush(stdout);
            return true;
        };
        GenerationResult result;
        try {
            result = images.empty() ? session.chat(conversation, options, show)
                                    : session.chat(conversation, images, options, show);
        } catch (const Error& e) {
            // A turn with images the engine refused (e.g. one it cannot read): the message is dropped, the chat
            // goes on.
            if (images.empty()) throw;
            watcher.generating(false);
            std::fprintf(stderr, "%s\n", e.what());
            conversation.messages.erase(conversation.messages.end() - 1);
            images.resize(images_before);
            continue;
        }
        watcher.generating(false);
        if (tty && in_reasoning) std::fputs("\033[0m", stdout);
        std::fputs(result.stop_reason == StopReason::cancelled ? " [stopped]\n" : "\n", stdout);
        nlohmann::ordered_json reply = {{"role", "assistant"}, {"content", result.content}};
        if (!result.reasoning.empty()) reply["reasoning_content"] = result.reasoning;
        conversation.messages.push_back(std::move(reply));
        if (result.stop_reason == StopReason::context_full) {
            std::fputs("[the context is full; start a new chat]\n", stderr);
            break;
        }
    }
    return 0;
}

}  // namespace ember::cli
