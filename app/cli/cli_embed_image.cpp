// SPDX-License-Identifier: MIT
// ember-cli embed-image --mmproj P --image IMG -o OUT.f32 [--json] [--backend B] [--repeat N] [--max-pixels N]:
// the image-token embeddings of one image as raw float32 [n_tokens, n_embd]; --json prints the token count, the
// (t, h, w) grid of the merged tokens and the seconds of each encode.
#include <chrono>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "ember/error.h"
#include "ember/vision.h"

namespace ember::cli {

int run_embed_image(const Args& args) {
    const ParsedArgs a(args, {{"--mmproj", ""},
                              {"--image", ""},
                              {"--output", "-o"},
                              {"--json", "", false},
                              {"--backend", ""},
                              {"--repeat", ""},
                              {"--max-pixels", ""},
                              {"--threads", "-t"}});
    const std::string mmproj = a.require("--mmproj");
    const std::string image_path = a.require("--image");
    const std::string output = a.require("--output");
    const long long repeat = a.get_int("--repeat", 1);
    if (repeat < 1 || repeat > 1000) throw UsageError("--repeat must be 1..1000");
    const vision::OpenedProjector opened =
        vision::open_projector(mmproj, a.get("--backend", "cpu"), static_cast<int>(a.get_int("--threads", 0)));
    vision::Projector* projector = opened.projector.get();
    if (a.has("--max-pixels")) projector->set_max_pixels(a.get_int("--max-pixels", 0));
    const vision::Image image = vision::load_image(image_path);

    vision::ImageEmbedding e;
    std::vector<double> seconds;
    for (long long r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        e = projector->encode(image);
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::ofstream out(output, std::ios::binary);
    out.write(reinterpret_cast<const char*>(e.rows.data()), static_cast<std::streamsize>(e.rows.size() * 4));
    if (!out) throw Error(output + ": cannot write the embeddings");

    if (a.has("--json")) {
        nlohmann::ordered_json doc;
        doc["image"] = image_path;
        doc["width"] = image.width;
        doc["height"] = image.height;
        doc["resized"] = {e.grid.height, e.grid.width};
        doc["downscaled"] = e.downscaled;
        doc["tokens"] = e.tokens();
        doc["grid"] = {1, e.grid.merged_rows(), e.grid.merged_cols()};
        doc["n_embd"] = e.n_embd;
        doc["backend"] = opened.backend;
        doc["seconds"] = seconds;
        std::cout << doc.dump() << "\n";
    } else {
        std::cout << image_path << ": " << e.tokens() << " tokens (grid 1x" << e.grid.merged_rows() << "x"
                  << e.grid.merged_cols() << "), " << e.n_embd << " wide, " << seconds.back() << " s"
                  << (e.downscaled ? ", downscaled to the pixel limit" : "") << "\n";
    }
    return 0;
}

}  // namespace ember::cli
