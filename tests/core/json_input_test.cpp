// parse_user_json: valid JSON parses as nlohmann does; a key given twice anywhere is
// refused with the key and the object it sits in; broken JSON names the input and,
// when given, what was expected.
#include "core/json_input.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace strata {
namespace {

TEST(UserJson, ParsesWhatNlohmannParses) {
  const nlohmann::json j = parse_user_json(R"({"a": [1, {"b": 2, "c": [3]}], "d": {"a": 4}})", "x.json");
  EXPECT_EQ(j["a"][1]["b"], 2);
  EXPECT_EQ(j["d"]["a"], 4);  // the same key in different objects is fine
  EXPECT_EQ(parse_user_json("[{\"k\": 1}, {\"k\": 2}]", "x.json")[1]["k"], 2);
}

TEST(UserJson, KeysGivenTwiceAreRefusedWithTheirPath) {
  testing::expect_user_error([] { parse_user_json(R"({"a": 1, "b": 2, "a": 3})", "top.json"); },
                             {"top.json: the key \"a\" appears twice in the top-level object (which value is meant?)"});
  testing::expect_user_error([] { parse_user_json(R"({"x": {"y": {"k": 1, "k": 1}}})", "nested.json"); },
                             {"nested.json: the key \"k\" appears twice in \"x.y\""});
  testing::expect_user_error([] { parse_user_json(R"({"x": [{"k": 1}, {"k": 2, "k": 3}]})", "list.json"); },
                             {"list.json: the key \"k\" appears twice in \"x[]\""});
}

TEST(UserJson, BrokenJsonNamesTheInputAndTheExpectation) {
  testing::expect_user_error([] { parse_user_json("{\"a\": [1,", "plan.json"); }, {"plan.json: not valid JSON ("});
  testing::expect_user_error([] { parse_user_json("nope", "s.json", "{\"train\": [...]}"); },
                             {"s.json: not valid JSON (", "); expected {\"train\": [...]}"});
}

}  // namespace
}  // namespace strata
