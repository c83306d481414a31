// SPDX-License-Identifier: MIT
// Compute pipelines made on first use from the embedded SPIR-V modules. Every pipeline shares one layout: up to
// kMaxBindings storage buffers set by push descriptors, and 128 bytes of push constants.
#pragma once

#include <map>
#include <string>

#include "backend/vulkan/vk_context.h"

namespace ember::vulkan {

constexpr uint32_t kMaxBindings = 8;
constexpr uint32_t kPushConstantBytes = 128;

class Pipelines {
public:
    explicit Pipelines(const Context& ctx);
    ~Pipelines();
    Pipelines(const Pipelines&) = delete;
    Pipelines& operator=(const Pipelines&) = delete;

    // Throws ember::Error when no module of that name was built (an op or type the backend lacks).
    VkPipeline get(const std::string& name);
    bool has(const std::string& name) const;
    VkPipelineLayout layout() const { return layout_; }

private:
    const Context& ctx_;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    std::map<std::string, VkPipeline, std::less<>> pipelines_;
};

}  // namespace ember::vulkan
