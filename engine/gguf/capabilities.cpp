// SPDX-License-Identifier: MIT
// Which optional parts a file carries (../specs/drafted-gguf.md §6 and §8.1). Only detection: the full
// validation of a draft or an MTP head belongs to model loading.
#include "ember/gguf.h"

namespace ember::gguf {

DflashMark dflash_mark(const File& file) {
    const Value* marker = file.find("dflash.embedded");
    if (marker && marker->type() == ValueType::BOOL) return marker->as_bool() ? DflashMark::marked : DflashMark::none;
    if (file.has("dflash.block_count") && file.find_tensor("dflash.fc.weight")) return DflashMark::unmarked;
    return DflashMark::none;
}

Capabilities describe(const File& file) {
    Capabilities caps;
    caps.architecture = std::string(file.get_string("general.architecture", ""));
    if (!caps.architecture.empty()) {
        const std::string prefix = caps.architecture + ".";
        caps.mtp_layers = file.get_u32(prefix + "nextn_predict_layers", 0);
        if (caps.mtp_layers > 0) {
            const int64_t block_count = file.get_int(prefix + "block_count", 0);
            caps.mtp_tensors_present = block_count >= caps.mtp_layers;
            for (int64_t j = block_count - caps.mtp_layers; caps.mtp_tensors_present && j < block_count; ++j) {
                const std::string blk = "blk." + std::to_string(j) + ".nextn.";
                for (const char* part : {"eh_proj.weight", "enorm.weight", "hnorm.weight"})
                    if (!file.find_tensor(blk + part)) caps.mtp_tensors_present = false;
            }
        }
    }
    if (const Value* marker = file.find("dflash.embedded"))
        caps.dflash_marker = marker->type() == ValueType::BOOL && marker->as_bool();
    for (const TensorInfo& t : file.tensors())
        if (t.name.starts_with("dflash.")) ++caps.dflash_tensors;
    caps.dflash = dflash_mark(file);
    for (const KeyValue& kv : file.metadata())
        if (kv.key.starts_with("clip.")) {
            caps.vision_projector = true;
            break;
        }
    caps.has_chat_template = file.has("tokenizer.chat_template");
    return caps;
}

}  // namespace ember::gguf
