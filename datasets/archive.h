// Reading members of tar and zip archives (any compression libarchive knows:
// .tgz, .tar.gz, .zip, ...) as byte streams, without unpacking to disk. Members are
// visited in stored order, so a loader that needs several members parses each into
// its own structure as it comes and assembles the dataset at the end.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "datasets/byte_source.h"

namespace strata::data {

// True when the name looks like an archive this reader handles (by extension).
bool is_archive_path(const fs::path& path);

// Calls visit(member_path, stream) for every regular-file member. The visitor may
// read all, part or none of the stream. Throws UserError naming the archive (and the
// member) when it cannot be opened, is truncated or is corrupt.
void for_each_archive_member(const fs::path& archive,
                             const std::function<void(const std::string& member, ByteSource& data)>& visit);

// Paths of the regular-file members, in stored order.
std::vector<std::string> list_archive_members(const fs::path& archive);

// The last path component of a member ("cora/cora.cites" -> "cora.cites").
std::string member_basename(const std::string& member);

}  // namespace strata::data
