#include "core/json_input.h"

#include <set>
#include <vector>

#include "core/error.h"

namespace strata {
namespace {

// One open object or array while parsing: the keys seen so far, and the key (or
// "[]") the next nested value sits under.
struct Frame {
  bool object = false;
  std::set<std::string> keys;
  std::string at;
};

std::string path_of(const std::vector<Frame>& frames) {
  std::string path;
  for (size_t k = 0; k + 1 < frames.size(); ++k)
    path += frames[k].object ? (path.empty() ? "" : ".") + frames[k].at : "[]";
  return path.empty() ? "the top-level object" : "\"" + path + "\"";
}

}  // namespace

nlohmann::json parse_user_json(const std::string& text, const std::string& what, const std::string& expected) {
  std::vector<Frame> frames;
  std::string repeated;  // the first key given twice, with its object's path
  using Event = nlohmann::json::parse_event_t;
  const nlohmann::json::parser_callback_t track = [&](int, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        frames.push_back({event == Event::object_start, {}, {}});
        break;
      case Event::object_end:
      case Event::array_end:
        if (!frames.empty()) frames.pop_back();
        break;
      case Event::key:
        if (!frames.empty()) {
          Frame& f = frames.back();
          f.at = parsed.get<std::string>();
          if (!f.keys.insert(f.at).second && repeated.empty())
            repeated = fmt::format("the key \"{}\" appears twice in {}", f.at, path_of(frames));
        }
        break;
      case Event::value:
        break;
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, track);
  } catch (const nlohmann::json::exception& e) {
    STRATA_FAIL("{}: not valid JSON ({}){}", what, e.what(), expected.empty() ? "" : "; expected " + expected);
  }
  STRATA_CHECK(repeated.empty(), "{}: {} (which value is meant?)", what, repeated);
  return j;
}

}  // namespace strata
