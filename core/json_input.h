// JSON that users write (plan files, split files, dataset side files). nlohmann::json
// keeps the last value of a key an object gives twice; a file that says one thing
// twice is ambiguous, so parse_user_json refuses it and names the key and where it is.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace strata {

// Parses `text`; a UserError "<what>: not valid JSON (<parser's message>); expected
// <expected>" (the last part when `expected` is given) or "<what>: the key "<k>"
// appears twice in <the object's path>" otherwise.
nlohmann::json parse_user_json(const std::string& text, const std::string& what, const std::string& expected = "");

}  // namespace strata
