// SPDX-License-Identifier: MIT
// ember-cli: the engine from the command line. Each command lives in its own cli_<command>.cpp.
#include <iostream>
#include <string>
#include <vector>

#include "cli_args.h"
#include "cli_commands.h"
#include "ember/error.h"
#include "ember_version.h"

namespace {

struct Command {
    const char* name;
    int (*run)(const ember::cli::Args&);
    const char* summary;
};

// One line per command, in the order `help` lists them.
constexpr Command kCommands[] = {
    {"run", ember::cli::run_run, "run -m FILE -p TEXT    generate a continuation (--chat: an answer) and stream it"},
    {"chat", ember::cli::run_chat, "chat -m FILE           interactive chat in the terminal (Ctrl-C stops a reply)"},
    {"bench", ember::cli::run_bench, "bench -m FILE         prefill and decode tokens/s (-p 512 -n 128 -r 3, --json)"},
    {"logits", ember::cli::run_logits,
     "logits -m FILE ...    raw float32 logits of every position (--tokens 1,2,3 -o F)"},
    {"serve", ember::cli::run_serve,
     "serve -m FILE          an OpenAI-compatible server on 127.0.0.1:8080 (--port, --api-key)"},
    {"embed-image", ember::cli::run_embed_image,
     "embed-image --mmproj P  image-token embeddings of --image IMG as float32 (-o F, --json)"},
    {"devices", ember::cli::run_devices,
     "devices               GPU devices with memory heaps and features (--bandwidth, --json)"},
    {"info", ember::cli::run_info, "info FILE             what a model file holds (architecture, drafting, vision)"},
    {"tokenize", ember::cli::run_tokenize, "tokenize -m FILE ...  the tokens of a text (--text T | --file F, --json)"},
    {"template", ember::cli::run_template,
     "template --messages F  render a conversation through a chat template (-m, --template)"},
};

void print_help(std::ostream& out) {
    out << "Ember " << EMBER_VERSION << ": local language models with their own inference engine.\n\n"
        << "usage: ember-cli COMMAND [ARGS]\n\ncommands:\n";
    for (const Command& c : kCommands) out << "  " << c.summary << "\n";
    out << "  version               print the version\n"
        << "  help                  this text\n\n"
        << "Images: --mmproj FILE (else an mmproj*.gguf beside the model) with --image IMG on run --chat, chat (or\n"
        << "/image PATH), logits and bench; --max-pixels N lowers the projector's pixel limit.\n"
        << "Look inside any GGUF file with ember-gguf (inspect, validate, types).\n";
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const std::string command = args.empty() ? "help" : args[0];
    if (command == "help" || command == "-h" || command == "--help") {
        print_help(std::cout);
        return 0;
    }
    if (command == "version" || command == "--version") {
        std::cout << "ember-cli " << EMBER_VERSION << "\n";
        return 0;
    }
    for (const Command& c : kCommands) {
        if (command != c.name) continue;
        try {
            return c.run(ember::cli::Args(args.begin() + 1, args.end()));
        } catch (const ember::cli::UsageError& e) {
            std::cerr << "ember-cli " << c.name << ": " << e.what() << "\n";
            return 2;
        } catch (const ember::Error& e) {
            std::cerr << e.what() << "\n";
            return 1;
        } catch (const std::bad_alloc&) {
            std::cerr << "ember-cli " << c.name << ": out of memory\n";
            return 1;
        } catch (const std::exception& e) {
            // Never an abort: whatever the engine let through still ends as one line and exit status 1.
            std::cerr << "ember-cli " << c.name << ": " << e.what() << "\n";
            return 1;
        }
    }
    std::cerr << "ember-cli: unknown command '" << command << "'\n\n";
    print_help(std::cerr);
    return 2;
}
