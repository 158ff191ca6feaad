// Content hashing (XXH3, 128-bit) for cache keys and file checksums.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

struct Hash128 {
  uint64_t lo = 0, hi = 0;
  bool operator==(const Hash128&) const = default;
  std::string hex() const;  // 32 lowercase hex digits
};

Hash128 hash_bytes(const void* data, size_t size, uint64_t seed = 0);
inline Hash128 hash_string(std::string_view s) { return hash_bytes(s.data(), s.size()); }

// Incremental hashing of several pieces.
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  Hasher& add(const void* data, size_t size);
  Hasher& add(std::string_view s);
  Hasher& add_u64(uint64_t v) { return add(&v, sizeof v); }
  Hash128 digest() const;

 private:
  void* state_;
};

}  // namespace strata
