// SPDX-License-Identifier: MIT
// make_json_schema_constraint: the JSON schema recognizer lifted from bytes to tokens.
#include <string>
#include <vector>

#include "ember/constraint.h"
#include "ember/tokenizer.h"
#include "runtime/json_schema_matcher.h"

namespace ember {

namespace {

class JsonSchemaConstraint : public TokenConstraint {
public:
    JsonSchemaConstraint(const Tokenizer& tokenizer, const nlohmann::json& schema)
        : schema_(std::make_shared<runtime::JsonSchema>(schema)) {
        const int32_t n = tokenizer.n_vocab();
        pieces_.reserve(static_cast<size_t>(n));
        // Control tokens have no text here, so they are never allowed (end tokens are the session's business).
        for (int32_t id = 0; id < n; ++id) pieces_.push_back(tokenizer.token_to_piece(id, false));
    }

    class Walk : public State {
    public:
        explicit Walk(const JsonSchemaConstraint& c) : owner_(c), matcher_(c.schema_), scratch_(c.schema_) {}
        bool allows(int32_t token) const override {
            if (token < 0 || static_cast<size_t>(token) >= owner_.pieces_.size()) return false;
            const std::string& piece = owner_.pieces_[static_cast<size_t>(token)];
            if (piece.empty()) return false;
            scratch_.assign(matcher_);
            for (const char c : piece)
                if (!scratch_.feed(static_cast<unsigned char>(c))) return false;
            return true;
        }
        bool complete() const override { return matcher_.complete(); }
        void accept(int32_t token) override {
            if (token < 0 || static_cast<size_t>(token) >= owner_.pieces_.size()) return;
            for (const char c : owner_.pieces_[static_cast<size_t>(token)])
                matcher_.feed(static_cast<unsigned char>(c));
        }

    private:
        const JsonSchemaConstraint& owner_;
        runtime::JsonSchemaMatcher matcher_;
        mutable runtime::JsonSchemaMatcher scratch_;
    };

    std::unique_ptr<State> start() const override { return std::make_unique<Walk>(*this); }

private:
    std::shared_ptr<const runtime::JsonSchema> schema_;
    std::vector<std::string> pieces_;  // each token's bytes
};

}  // namespace

std::shared_ptr<const TokenConstraint> make_json_schema_constraint(const Tokenizer& tokenizer,
                                                                   const nlohmann::json& schema) {
    return std::make_shared<JsonSchemaConstraint>(tokenizer, schema);
}

JsonSchemaCheck check_json_schema_text(const nlohmann::json& schema, std::string_view text) {
    runtime::JsonSchemaMatcher matcher(std::make_shared<runtime::JsonSchema>(schema));
    JsonSchemaCheck check;
    for (const char c : text)
        if (!matcher.feed(static_cast<unsigned char>(c))) return check;
    check.prefix_ok = true;
    check.complete = matcher.complete();
    return check;
}

}  // namespace ember
