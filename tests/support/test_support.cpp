#include "tests/support/test_support.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "core/file_util.h"

namespace strata::testing {

std::vector<uint64_t> fuzz_seeds(std::vector<uint64_t> defaults) {
  const auto text = env_value("STRATA_FUZZ_SEEDS");
  if (!text) return defaults;
  static const std::regex item_re(R"((\d{1,9})(?:-(\d{1,9}))?)");
  std::vector<uint64_t> seeds;
  std::stringstream list(*text);
  for (std::string item; std::getline(list, item, ',');) {
    std::smatch m;
    if (!std::regex_match(item, m, item_re) || (m[2].matched && std::stoull(m[2]) < std::stoull(m[1]))) {
      // Read while the tests are registered, before any runs: stop with the reason.
      std::fprintf(stderr, "STRATA_FUZZ_SEEDS='%s': '%s' is not a seed or a range such as 1-40\n", text->c_str(),
                   item.c_str());
      std::exit(2);
    }
    const uint64_t lo = std::stoull(m[1]), hi = m[2].matched ? std::stoull(m[2]) : lo;
    for (uint64_t s = lo; s <= hi; ++s) seeds.push_back(s);
  }
  return seeds;
}

std::string kernel_sanitizer_flags() {
  const auto flags = env_value("STRATA_CXXFLAGS");
  return flags && flags->find("-fsanitize") != std::string::npos ? *flags : std::string();
}

std::filesystem::path data_root() {
  if (auto v = env_value("STRATA_DATA_ROOT")) return *v;
  return STRATA_DEFAULT_DATA_ROOT;
}

bool have_data(const std::string& relative) { return std::filesystem::exists(data_root() / relative); }

std::string skip_message(const std::string& relative) {
  return "dataset file not found: " + (data_root() / relative).string() +
         " (set STRATA_DATA_ROOT to the folder holding ../shared/datasets)";
}

ScopedCacheRoot::ScopedCacheRoot(const std::string& tag) {
  static int counter = 0;
  const char* old = std::getenv("STRATA_CACHE_DIR");
  had_ = old != nullptr;
  saved_ = old ? old : "";
  root_ = std::filesystem::temp_directory_path() /
          ("strata-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(root_);
  setenv("STRATA_CACHE_DIR", root_.c_str(), 1);
}

ScopedCacheRoot::~ScopedCacheRoot() {
  if (had_) {
    setenv("STRATA_CACHE_DIR", saved_.c_str(), 1);
  } else {
    unsetenv("STRATA_CACHE_DIR");
  }
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

void TempDirTest::SetUp() {
  dir_ = std::filesystem::temp_directory_path() / ("strata-" + tag_ + "-" + std::to_string(::getpid()) + "-" +
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

void TempDirTest::TearDown() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Graph random_graph(const RandomGraphSpec& s) {
  Rng rng(s.seed);
  std::vector<int64_t> rows, cols;
  std::vector<float> vals;
  for (int64_t r = 0; r < s.rows; ++r) {
    if (rng.uniform() < s.empty_row_fraction) continue;
    int64_t deg = static_cast<int64_t>(rng.below(static_cast<uint64_t>(2 * s.avg_degree) + 1));
    if (r == s.rows / 2 && s.long_row_length > 0) deg = s.long_row_length;
    for (int64_t k = 0; k < deg && s.cols > 0; ++k) {
      rows.push_back(r);
      cols.push_back(static_cast<int64_t>(rng.below(static_cast<uint64_t>(s.cols))));
      vals.push_back(static_cast<float>(rng.uniform(-1.0, 1.0)));
    }
  }
  CooOptions opt;
  opt.duplicates = DuplicatePolicy::KeepFirst;
  opt.force_int64 = s.int64_indices;
  opt.source = "random test graph";
  Tensor v = s.weighted ? Tensor::from_vector(vals) : Tensor();
  return Graph::from_coo(s.rows, s.cols, Tensor::from_vector(rows), Tensor::from_vector(cols), opt, v);
}

}  // namespace strata::testing
