// SPDX-License-Identifier: MIT
// The ember-cli commands, one file each (cli_<command>.cpp). Each takes the arguments after its name and
// returns the exit code: 0 success, 1 failure (a one-line message on stderr), 2 usage error.
#pragma once

#include <string>
#include <vector>

namespace ember::cli {

using Args = std::vector<std::string>;

int run_info(const Args& args);
int run_tokenize(const Args& args);
int run_template(const Args& args);
int run_run(const Args& args);
int run_chat(const Args& args);
int run_logits(const Args& args);
int run_bench(const Args& args);
int run_devices(const Args& args);
int run_serve(const Args& args);
int run_embed_image(const Args& args);

}  // namespace ember::cli
