#include "core/hash.h"

#include <xxhash.h>

#include <fmt/format.h>

namespace strata {

std::string Hash128::hex() const { return fmt::format("{:016x}{:016x}", hi, lo); }

Hash128 hash_bytes(const void* data, size_t size, uint64_t seed) {
  XXH128_hash_t h = XXH3_128bits_withSeed(data, size, seed);
  return {h.low64, h.high64};
}

Hasher::Hasher() : state_(XXH3_createState()) { XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_)); }
Hasher::~Hasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

Hasher& Hasher::add(const void* data, size_t size) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), data, size);
  return *this;
}

Hasher& Hasher::add(std::string_view s) {
  // Length first, so ("ab","c") and ("a","bc") hash differently.
  add_u64(s.size());
  return add(s.data(), s.size());
}

Hash128 Hasher::digest() const {
  XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  return {h.low64, h.high64};
}

}  // namespace strata
