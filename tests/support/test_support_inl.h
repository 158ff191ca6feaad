#pragma once

#include "core/error.h"

namespace strata::testing {

template <class F>
void expect_user_error(F&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected a UserError, but nothing was thrown";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message lacks '" << p << "':\n  " << msg;
  }
}

}  // namespace strata::testing
