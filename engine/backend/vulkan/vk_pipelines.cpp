// SPDX-License-Identifier: MIT
// Compute pipelines made on first use from the embedded SPIR-V, with their shared layout.
#include "backend/vulkan/vk_pipelines.h"

#include <algorithm>
#include <cstring>

#include "ember/error.h"
#include "vulkan/spirv_modules.h"

namespace ember::vulkan {

namespace {

const vk_kernels::SpirvModule* find_module(const std::string& name) {
    const auto modules = vk_kernels::spirv_modules();
    const auto it = std::lower_bound(modules.begin(), modules.end(), name,
                                     [](const vk_kernels::SpirvModule& m, const std::string& n) {
                                         return std::strcmp(m.name, n.c_str()) < 0;
                                     });
    return it != modules.end() && name == it->name ? &*it : nullptr;
}

}  // namespace

Pipelines::Pipelines(const Context& ctx) : ctx_(ctx) {
    const Api& vk = ctx.api();
    VkDescriptorSetLayoutBinding bindings[kMaxBindings];
    for (uint32_t i = 0; i < kMaxBindings; ++i)
        bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    dci.bindingCount = kMaxBindings;
    dci.pBindings = bindings;
    check(vk.vkCreateDescriptorSetLayout(ctx.device(), &dci, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
    const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
    VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    lci.setLayoutCount = 1;
    lci.pSetLayouts = &set_layout_;
    lci.pushConstantRangeCount = 1;
    lci.pPushConstantRanges = &range;
    check(vk.vkCreatePipelineLayout(ctx.device(), &lci, nullptr, &layout_), "vkCreatePipelineLayout");
}

Pipelines::~Pipelines() {
    const Api& vk = ctx_.api();
    for (auto& [name, p] : pipelines_) vk.vkDestroyPipeline(ctx_.device(), p, nullptr);
    vk.vkDestroyPipelineLayout(ctx_.device(), layout_, nullptr);
    vk.vkDestroyDescriptorSetLayout(ctx_.device(), set_layout_, nullptr);
}

bool Pipelines::has(const std::string& name) const { return find_module(name) != nullptr; }

VkPipeline Pipelines::get(const std::string& name) {
    if (auto it = pipelines_.find(name); it != pipelines_.end()) return it->second;
    const vk_kernels::SpirvModule* m = find_module(name);
    if (!m) throw Error("vulkan backend: no compute shader '" + name + "' (operation or type not supported)");
    const Api& vk = ctx_.api();
    VkShaderModuleCreateInfo sci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    sci.codeSize = m->word_count * 4;
    sci.pCode = m->words;
    VkShaderModule module;
    check(vk.vkCreateShaderModule(ctx_.device(), &sci, nullptr, &module), "vkCreateShaderModule");
    VkComputePipelineCreateInfo pci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    pci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pci.stage.module = module;
    pci.stage.pName = "main";
    pci.layout = layout_;
    VkPipeline pipeline;
    const VkResult r = vk.vkCreateComputePipelines(ctx_.device(), VK_NULL_HANDLE, 1, &pci, nullptr, &pipeline);
    vk.vkDestroyShaderModule(ctx_.device(), module, nullptr);
    check(r, ("vkCreateComputePipelines for " + name).c_str());
    pipelines_.emplace(name, pipeline);
    return pipeline;
}

}  // namespace ember::vulkan
