// SPDX-License-Identifier: MIT
// Constrained decoding: a TokenConstraint says which tokens may come next, so that the sampler only ever draws
// text a grammar accepts (a JSON schema, for structured output). A constraint is immutable and may be shared by
// threads and generations; each generation walks it with its own State on the session's thread.
//
// The sampler asks about the token it drew first and masks the whole vocabulary only when that one is refused,
// so a constraint costs little while the model already writes what the grammar wants. End-of-generation tokens
// are allowed exactly when the state is complete. A constraint never crashes or hangs on any token.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/error.h"

namespace ember {

class Tokenizer;

class TokenConstraint {
public:
    class State {
    public:
        virtual ~State() = default;
        // Whether `token` (not an end-of-generation token) may come next.
        virtual bool allows(int32_t token) const = 0;
        // Whether the text so far is a whole sentence of the grammar (the generation may end here).
        virtual bool complete() const = 0;
        // `token` was emitted (allows(token) was true).
        virtual void accept(int32_t token) = 0;
    };

    virtual ~TokenConstraint() = default;
    virtual std::unique_ptr<State> start() const = 0;
};

// JSON text that validates against `schema` (JSON Schema: type (one or a list), properties, required,
// additionalProperties (false, true or a schema), items, minItems, maxItems, enum, const; descriptive keywords
// such as title, description, default, format and pattern are ignored). An empty schema {} is any JSON value.
// The output is compact or lightly spaced: runs of whitespace are capped so a model cannot pad forever.
// Throws ember::Error naming the schema path and the keyword it does not support (anyOf, $ref, ...).
std::shared_ptr<const TokenConstraint> make_json_schema_constraint(const Tokenizer& tokenizer,
                                                                   const nlohmann::json& schema);

// The same grammar at the level of text, for tests and tools: whether `text` is accepted in full.
struct JsonSchemaCheck {
    bool prefix_ok = false;  // every byte was accepted
    bool complete = false;   // and the text is a whole value
};
JsonSchemaCheck check_json_schema_text(const nlohmann::json& schema, std::string_view text);

}  // namespace ember
