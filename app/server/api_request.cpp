// SPDX-License-Identifier: MIT
// parse_chat_request / parse_completion_request: OpenAI request bodies to engine requests.
#include "api_request.h"

#include <cmath>
#include <cstddef>
#include <string_view>

namespace ember::server {

namespace {

using nlohmann::json;

ApiError bad(const std::string& param, const std::string& problem) {
    return ApiError(400, param + ": " + problem, param);
}

const json* field(const json& body, const char* name) {
    const auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> number(const json& body, const char* name, double lo, double hi) {
    const json* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_number()) throw bad(name, "must be a number");
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi)
        throw bad(name, "must be between " + json(lo).dump() + " and " + json(hi).dump());
    return x;
}

std::optional<int64_t> integer(const json& body, const char* name, int64_t lo, int64_t hi) {
    const json* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) throw bad(name, "must be an integer");
    const int64_t x = v->get<int64_t>();
    if (x < lo || x > hi) throw bad(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    return x;
}

std::optional<bool> boolean(const json& body, const char* name) {
    const json* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) throw bad(name, "must be true or false");
    return v->get<bool>();
}

bool valid_base64(std::string_view s) {
    if (s.empty() || s.size() % 4 != 0) return false;
    size_t pad = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '=') {
            if (i + 2 < s.size()) return false;
            ++pad;
        } else if (pad || !(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/')) {
            return false;
        }
    }
    return pad <= 2;
}

std::vector<std::byte> decode_base64(std::string_view s) {
    auto value = [](char c) -> uint32_t {
        if (c >= 'A' && c <= 'Z') return static_cast<uint32_t>(c - 'A');
        if (c >= 'a' && c <= 'z') return static_cast<uint32_t>(c - 'a' + 26);
        if (c >= '0' && c <= '9') return static_cast<uint32_t>(c - '0' + 52);
        return c == '+' ? 62u : 63u;  // '/' (valid_base64 checked the alphabet)
    };
    std::vector<std::byte> out;
    out.reserve(s.size() / 4 * 3);
    for (size_t i = 0; i + 4 <= s.size(); i += 4) {
        uint32_t v = 0;
        int bytes = 3;
        for (size_t k = 0; k < 4; ++k) {
            if (s[i + k] == '=') {
                v <<= 6;
                --bytes;
            } else {
                v = (v << 6) | value(s[i + k]);
            }
        }
        for (int k = 0; k < bytes; ++k) out.push_back(static_cast<std::byte>((v >> (16 - 8 * k)) & 0xff));
    }
    return out;
}

// The images of one request as they are read, with the pixels they hold together (bounded).
struct ImageList {
    std::vector<vision::Image> images;
    int64_t pixels = 0;
};

// An image_url part: decoded into `out`, or refused with the reason (bad data, remote URL, no projector, not an
// image).
void read_image(const json& part, const std::string& where, const ServedModel& model, ImageList& out) {
    const json* image = field(part, "image_url");
    const json* url =
        image && image->is_object() ? field(*image, "url") : (image && image->is_string() ? image : nullptr);
    if (!url || !url->is_string()) throw bad(where + ".image_url.url", "must be a string");
    const std::string& u = url->get_ref<const std::string&>();
    if (!u.starts_with("data:"))
        throw bad(where + ".image_url.url", "remote image URLs are not allowed; send a data: URL");
    const size_t comma = u.find(',');
    if (comma == std::string::npos || u.substr(0, comma).find(";base64") == std::string::npos)
        throw bad(where + ".image_url.url", "must be a base64 data URL (data:image/png;base64,...)");
    const std::string_view data = std::string_view(u).substr(comma + 1);
    if (!valid_base64(data)) throw bad(where + ".image_url.url", "the image data is not valid base64");
    if (!model.has_vision)
        throw ApiError(400, where + ": this model has no vision projector, so it cannot read images", where,
                       "image_not_supported");
    const std::string name = where + ".image_url.url";
    try {
        out.images.push_back(vision::decode_image(decode_base64(data), name));
    } catch (const Error& e) {
        throw ApiError(400, e.what(), name, "invalid_image");
    }
    out.pixels += out.images.back().width * out.images.back().height;
    if (out.pixels > vision::kMaxDecodedPixels)
        throw ApiError(400,
                       name + ": the request's images hold more than " + std::to_string(vision::kMaxDecodedPixels) +
                           " pixels together",
                       name, "invalid_image");
}

// Content as the chat templates expect it: text parts joined into one string, or, when the message has images,
// image and text parts in their order.
json content_of(const json& message, const std::string& where, const ServedModel& model, bool optional,
                ImageList& images) {
    const json* c = field(message, "content");
    if (!c) {
        if (optional) return "";
        throw bad(where + ".content", "is missing");
    }
    if (c->is_string()) return *c;
    if (!c->is_array()) throw bad(where + ".content", "must be a string or a list of content parts");
    std::string text;
    json parts = json::array();
    bool has_images = false;
    for (size_t j = 0; j < c->size(); ++j) {
        const json& part = (*c)[j];
        const std::string at = where + ".content[" + std::to_string(j) + "]";
        if (!part.is_object() || !field(part, "type") || !part["type"].is_string())
            throw bad(at, "must be an object with a string 'type'");
        const std::string& type = part["type"].get_ref<const std::string&>();
        if (type == "text") {
            const json* t = field(part, "text");
            if (!t || !t->is_string()) throw bad(at + ".text", "must be a string");
            if (!text.empty()) text += "\n";
            text += t->get<std::string>();
            parts.push_back({{"type", "text"}, {"text", *t}});
        } else if (type == "image_url") {
            read_image(part, at, model, images);
            parts.push_back({{"type", "image"}});
            has_images = true;
        } else {
            throw bad(at + ".type", "'" + type + "' is not supported (text, image_url)");
        }
    }
    return has_images ? parts : json(text);
}

// Assistant tool calls as templates expect them: arguments as an object where the JSON string parses.
json tool_calls_of(const json& calls, const std::string& where) {
    if (!calls.is_array()) throw bad(where, "must be a list");
    json out = json::array();
    for (size_t k = 0; k < calls.size(); ++k) {
        const std::string at = where + "[" + std::to_string(k) + "]";
        const json& call = calls[k];
        const json* fn = call.is_object() ? field(call, "function") : nullptr;
        if (!fn || !fn->is_object() || !field(*fn, "name") || !(*fn)["name"].is_string())
            throw bad(at + ".function.name", "must be a string");
        json copy = call;
        if (const json* args = field(*fn, "arguments"); args && args->is_string()) {
            json parsed = json::parse(args->get<std::string>(), nullptr, false);
            if (!parsed.is_discarded()) copy["function"]["arguments"] = std::move(parsed);
        }
        out.push_back(std::move(copy));
    }
    return out;
}

json messages_of(const json& body, const ServedModel& model, ImageList& images) {
    const json* messages = field(body, "messages");
    if (!messages) throw bad("messages", "is missing");
    if (!messages->is_array() || messages->empty()) throw bad("messages", "must be a non-empty list");
    json out = json::array();
    for (size_t i = 0; i < messages->size(); ++i) {
        const json& m = (*messages)[i];
        const std::string where = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) throw bad(where, "must be an object");
        const json* role = field(m, "role");
        if (!role || !role->is_string()) throw bad(where + ".role", "must be a string");
        std::string r = role->get<std::string>();
        if (r == "developer") r = "system";
        if (r != "system" && r != "user" && r != "assistant" && r != "tool")
            throw bad(where + ".role", "'" + r + "' is not one of system, developer, user, assistant, tool");
        json message = {{"role", r}};
        const bool has_calls = r == "assistant" && field(m, "tool_calls");
        message["content"] = content_of(m, where, model, r == "assistant", images);
        if (has_calls) message["tool_calls"] = tool_calls_of(m["tool_calls"], where + ".tool_calls");
        if (const json* rc = field(m, "reasoning_content")) {
            if (!rc->is_string()) throw bad(where + ".reasoning_content", "must be a string");
            message["reasoning_content"] = *rc;
        }
        for (const char* key : {"tool_call_id", "name"}) {
            if (const json* v = field(m, key)) {
                if (!v->is_string()) throw bad(where + "." + key, "must be a string");
                message[key] = *v;
            }
        }
        out.push_back(std::move(message));
    }
    return out;
}

void read_stop(const json& body, GenerationOptions& options) {
    const json* stop = field(body, "stop");
    if (!stop) return;
    if (stop->is_string()) {
        options.stop.push_back(stop->get<std::string>());
        return;
    }
    if (!stop->is_array() || stop->size() > 16) throw bad("stop", "must be a string or a list of up to 16 strings");
    for (const json& s : *stop) {
        if (!s.is_string() || s.get_ref<const std::string&>().empty()) throw bad("stop", "must hold non-empty strings");
        options.stop.push_back(s.get<std::string>());
    }
}

// The fields /v1/chat/completions and /v1/completions share.
GenerationOptions generation_options(const json& body, StreamRequest& streaming) {
    GenerationOptions options;
    options.max_tokens = -1;  // until the end of the answer or the context
    options.on_context_full = ContextFullPolicy::stop;
    SamplingParams& p = options.sampling;
    p.temperature = 1.0f;  // OpenAI's default
    if (auto v = integer(body, "max_completion_tokens", 1, 1 << 24))
        options.max_tokens = static_cast<int>(*v);
    else if (auto w = integer(body, "max_tokens", 1, 1 << 24))
        options.max_tokens = static_cast<int>(*w);
    if (auto v = number(body, "temperature", 0, 2)) p.temperature = static_cast<float>(*v);
    if (auto v = number(body, "top_p", 0, 1)) p.top_p = static_cast<float>(*v);
    if (auto v = integer(body, "top_k", 0, 1 << 20)) p.top_k = static_cast<int>(*v);
    if (auto v = number(body, "min_p", 0, 1)) p.min_p = static_cast<float>(*v);
    if (auto v = number(body, "presence_penalty", -2, 2)) p.presence_penalty = static_cast<float>(*v);
    if (auto v = number(body, "frequency_penalty", -2, 2)) p.frequency_penalty = static_cast<float>(*v);
    if (auto v = number(body, "repeat_penalty", 0, 10)) p.repeat_penalty = static_cast<float>(*v);
    if (auto v = integer(body, "seed", INT64_MIN, INT64_MAX)) p.seed = static_cast<uint64_t>(*v);
    read_stop(body, options);
    if (auto n = integer(body, "n", 1, 1 << 20); n && *n != 1) throw bad("n", "only 1 choice is supported");
    if (auto lp = boolean(body, "logprobs"); lp && *lp) throw bad("logprobs", "log probabilities are not supported");
    streaming.stream = boolean(body, "stream").value_or(false);
    if (const json* so = field(body, "stream_options")) {
        if (!so->is_object()) throw bad("stream_options", "must be an object");
        streaming.include_usage = boolean(*so, "include_usage").value_or(false);
    }
    return options;
}

std::optional<json> response_schema(const json& body) {
    const json* rf = field(body, "response_format");
    if (!rf) return std::nullopt;
    if (!rf->is_object() || !field(*rf, "type") || !(*rf)["type"].is_string())
        throw bad("response_format", "must be an object with a string 'type'");
    const std::string& type = (*rf)["type"].get_ref<const std::string&>();
    if (type == "text") return std::nullopt;
    if (type == "json_object") return json{{"type", "object"}};
    if (type != "json_schema") throw bad("response_format.type", "must be text, json_object or json_schema");
    const json* js = field(*rf, "json_schema");
    if (!js || !js->is_object()) throw bad("response_format.json_schema", "must be an object");
    const json* schema = field(*js, "schema");
    if (!schema) return json::object();
    if (!schema->is_object()) throw bad("response_format.json_schema.schema", "must be an object");
    return *schema;
}

}  // namespace

ChatRequest parse_chat_request(const json& body, const ServedModel& model) {
    if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");
    if (const json* m = field(body, "model"); m && !m->is_string()) throw bad("model", "must be a string");
    ChatRequest r;
    ImageList images;
    r.conversation.messages = messages_of(body, model, images);
    if (!images.images.empty()) r.images = std::make_shared<const std::vector<vision::Image>>(std::move(images.images));
    r.options = generation_options(body, r.streaming);
    r.response_schema = response_schema(body);

    if (const json* kwargs = field(body, "chat_template_kwargs")) {
        if (!kwargs->is_object()) throw bad("chat_template_kwargs", "must be an object");
        for (const auto& [k, v] : kwargs->items()) r.conversation.kwargs[k] = v;
    }
    if (const json* effort = field(body, "reasoning_effort")) {
        if (!effort->is_string()) throw bad("reasoning_effort", "must be a string");
        const std::string& e = effort->get_ref<const std::string&>();
        if (e != "none" && e != "minimal" && e != "low" && e != "medium" && e != "high")
            throw bad("reasoning_effort", "must be none, minimal, low, medium or high");
        if (e == "none") r.conversation.kwargs["enable_thinking"] = false;
        // Templates that take an effort (gpt-oss's harmony) read it as this kwarg; the others ignore it.
        if (e == "low" || e == "medium" || e == "high") r.conversation.kwargs["reasoning_effort"] = e;
    }
    // Structured output starts at the first token, so the reply must not open with a thinking block.
    if (r.response_schema && !r.conversation.kwargs.contains("enable_thinking"))
        r.conversation.kwargs["enable_thinking"] = false;

    std::string choice = "auto", named;  // named: the one function tool_choice asks for
    if (const json* tc = field(body, "tool_choice")) {
        if (tc->is_string()) {
            choice = tc->get<std::string>();
            if (choice != "none" && choice != "auto" && choice != "required")
                throw bad("tool_choice", "must be none, auto, required or a function");
        } else if (tc->is_object() && field(*tc, "function") && (*tc)["function"].is_object() &&
                   field((*tc)["function"], "name") && (*tc)["function"]["name"].is_string()) {
            named = (*tc)["function"]["name"].get<std::string>();
        } else {
            throw bad("tool_choice",
                      "must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
    }
    if (const json* tools = field(body, "tools")) {
        if (!tools->is_array()) throw bad("tools", "must be a list");
        for (size_t i = 0; i < tools->size(); ++i) {
            const json& t = (*tools)[i];
            const json* fn = t.is_object() ? field(t, "function") : nullptr;
            if (!fn || !fn->is_object() || !field(*fn, "name") || !(*fn)["name"].is_string())
                throw bad("tools[" + std::to_string(i) + "].function.name", "must be a string");
        }
        json offered = json::array();
        for (const json& t : *tools)
            if (named.empty() || t["function"]["name"] == named) offered.push_back(t);
        if (!named.empty() && offered.empty()) throw bad("tool_choice", "names no function given in tools");
        if (choice != "none" && !offered.empty()) r.conversation.tools = std::move(offered);
    } else if (!named.empty()) {
        throw bad("tool_choice", "names a function but no tools are given");
    }
    return r;
}

CompletionRequest parse_completion_request(const json& body) {
    if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");
    CompletionRequest r;
    const json* prompt = field(body, "prompt");
    if (!prompt) throw bad("prompt", "is missing");
    if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) prompt = &(*prompt)[0];
    if (!prompt->is_string()) throw bad("prompt", "must be a string");
    r.prompt = prompt->get<std::string>();
    if (r.prompt.empty()) throw bad("prompt", "is empty");
    r.options = generation_options(body, r.streaming);
    if (!field(body, "max_tokens") && !field(body, "max_completion_tokens"))
        r.options.max_tokens = 16;  // the completions API's default
    return r;
}

}  // namespace ember::server
