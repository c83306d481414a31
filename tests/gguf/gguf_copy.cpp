// SPDX-License-Identifier: MIT
// Test tool: reads a GGUF with Ember's reader and writes it again with Ember's writer (same keys in the same
// order, same tensors, same alignment). The interop tests compare the result with the gguf package.
#include <iostream>

#include "ember/gguf.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: gguf_copy IN.gguf OUT.gguf\n";
        return 2;
    }
    try {
        using namespace ember::gguf;
        const File in = File::open(argv[1]);
        Writer out(in.alignment());
        for (const KeyValue& kv : in.metadata()) out.set(std::string(kv.key), to_owned(kv.value));
        for (const TensorInfo& t : in.tensors())
            out.add_tensor(std::string(t.name), t.type, std::span<const int64_t>(t.shape.data(), t.n_dims),
                           in.tensor_data(t));
        out.write(argv[2]);
    } catch (const ember::Error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
