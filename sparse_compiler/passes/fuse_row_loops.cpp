// fuse_row_loops: a chain of row programs as one row iteration.
// Legality and refusals: passes/fuse_row_programs.h.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "sparse_compiler/ir/equality.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/names.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/passes/fuse_row_programs.h"
#include "sparse_compiler/passes/row_program.h"

namespace strata::sc {

namespace {

std::string axes_text(const SparseBuffer& b) {
  std::vector<std::string> names;
  for (const auto& a : b->axes) names.push_back(a->name);
  return fmt::format("[{}]", fmt::join(names, ", "));
}

bool same_axis_definition(const Axis& a, const Axis& b) {
  auto same = [](const Expr& x, const Expr& y) {
    return x.defined() == y.defined() && (!x.defined() || structural_equal(x, y));
  };
  const bool parents = a->parent ? (b->parent && a->parent->name == b->parent->name) : !b->parent;
  return a->kind == b->kind && parents && same(a->length, b->length) && same(a->nnz, b->nnz) && a->width == b->width &&
         a->indptr == b->indptr && a->indices == b->indices && a->idtype == b->idtype && a->sorted == b->sorted;
}

// Points every axis and buffer reference at the fused kernel's declarations.
class CanonicalRefs : public IRMutator {
 public:
  CanonicalRefs(const std::map<std::string, Axis>& axes, const std::map<std::string, SparseBuffer>& buffers)
      : axes_(axes), buffers_(buffers) {}

 protected:
  Expr visit(const SparseLoadNode* op, const Expr& self) override {
    (void)self;
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(mutate(i));
    return sparse_load(buffers_.at(op->buffer->name), std::move(idx));
  }
  Stmt visit(const SparseStoreNode* op, const Stmt& self) override {
    (void)self;
    std::vector<Expr> idx;
    for (const auto& i : op->indices) idx.push_back(mutate(i));
    return sparse_store(buffers_.at(op->buffer->name), std::move(idx), mutate(op->value));
  }
  Stmt visit(const SparseIterationNode* op, const Stmt& self) override {
    (void)self;
    std::vector<IterVar> iters = op->iters;
    for (auto& it : iters) it.axis = axes_.at(it.axis->name);
    return sparse_iteration(op->name, std::move(iters), mutate(op->init), mutate(op->body), op->fuse_group);
  }

 private:
  const std::map<std::string, Axis>& axes_;
  const std::map<std::string, SparseBuffer>& buffers_;
};

}  // namespace

Kernel fuse_row_loops(const std::vector<Kernel>& chain, const std::string& name) {
  STRATA_ASSERT(!chain.empty(), "fuse_row_loops: no programs to fuse");
  Kernel out;
  out.name = name;
  out.stage = Stage::Coordinate;
  NameGen names;
  for (const auto& k : chain) {
    for (const auto& p : k.params) names.reserve(p.name);
    for (const auto& a : k.axes) names.reserve(a->name);
    for (const auto& b : k.buffers) names.reserve(b->name);
  }
  std::map<std::string, Axis> axes;
  std::map<std::string, SparseBuffer> buffers;
  std::map<std::string, std::string> declared_by;
  RowProgram fused;
  std::vector<RowProgram> programs;  // as written, for the checks' messages
  for (size_t c = 0; c < chain.size(); ++c) {
    const Kernel& k = chain[c];
    RowProgram r = row_program(k, "fuse_row_loops");
    if (c == 0) {
      fused.name = name;
      fused.row = r.row;
      names.reserve(r.row.var);
    }
    STRATA_CHECK(r.row.axis->name == fused.row.axis->name, "fuse_row_loops: {} iterates rows of axis {}, {} of axis {}",
                 k.name, r.row.axis->name, chain[0].name, fused.row.axis->name);
    for (const Axis& a : k.axes) {
      if (auto it = axes.find(a->name); it != axes.end()) {
        STRATA_CHECK(same_axis_definition(it->second, a), "fuse_row_loops: axis {} of {} is not the axis {} of {}",
                     a->name, k.name, a->name, declared_by.at("axis " + a->name));
        continue;
      }
      auto copy = std::make_shared<AxisNode>(*a);
      if (a->parent) {
        STRATA_ASSERT(axes.count(a->parent->name), "fuse_row_loops: {} declares axis {} before its parent {}", k.name,
                      a->name, a->parent->name);
        copy->parent = axes.at(a->parent->name);
      }
      axes[a->name] = copy;
      declared_by["axis " + a->name] = k.name;
      out.axes.push_back(copy);
    }
    for (const SparseBuffer& b : k.buffers) {
      std::vector<Axis> ax;
      for (const auto& a : b->axes) ax.push_back(axes.at(a->name));
      SparseBuffer nb = sparse_buffer(b->name, ax, b->dtype);
      if (auto it = buffers.find(b->name); it != buffers.end()) {
        STRATA_CHECK(axes_text(it->second) == axes_text(nb) && it->second->dtype == b->dtype,
                     "fuse_row_loops: {} is {} in {} and {} in {}", b->name, axes_text(it->second),
                     declared_by.at(b->name), axes_text(nb), k.name);
        continue;
      }
      buffers[b->name] = nb;
      declared_by[b->name] = k.name;
      out.buffers.push_back(nb);
    }
    for (const Param& p : k.params) {
      auto it = std::find_if(out.params.begin(), out.params.end(), [&](const Param& q) { return q.name == p.name; });
      if (it == out.params.end()) {
        out.params.push_back(p);
        continue;
      }
      STRATA_CHECK(it->kind == p.kind && it->dtype == p.dtype &&
                       (it->role == ParamRole::Workspace) == (p.role == ParamRole::Workspace),
                   "fuse_row_loops: parameter {} of {} is not the parameter {} of an earlier program", p.name, k.name,
                   p.name);
      if (p.role == ParamRole::Output) it->role = ParamRole::Output;
    }
    // The row variable becomes the fused one; variables bound in this program's
    // nests that an earlier program already bound get fresh names.
    std::map<std::string, std::string> renames;
    if (r.row.var != fused.row.var) renames[r.row.var] = fused.row.var;
    for (const auto& nest : r.nests)
      for (const auto& v : bound_vars(nest)) {
        if (renames.count(v)) continue;
        if (names.used(v))
          renames[v] = names.fresh(v);
        else
          names.reserve(v);
      }
    fused.row.axis = axes.at(fused.row.axis->name);
    CanonicalRefs canon(axes, buffers);
    std::vector<Stmt> nests;
    for (const auto& nest : r.nests) nests.push_back(canon.mutate(rename_vars(nest, renames)));
    programs.push_back(r);
    fused.nests.insert(fused.nests.end(), nests.begin(), nests.end());
  }
  // A buffer that one program writes and another touches may only be touched at
  // the row being worked on: the fused kernel runs each row's programs back to
  // back, and another row's part may not have run yet (or run in another thread).
  for (const auto& [bname, b] : buffers) {
    std::vector<size_t> touching, writing;
    for (size_t c = 0; c < chain.size(); ++c) {
      bool touches = false, writes = false;
      for (const auto& nest : programs[c].nests)
        for (const auto& a : sparse_accesses(nest))
          if (a.buffer == bname) {
            touches = true;
            writes |= a.store;
          }
      if (touches) touching.push_back(c);
      if (writes) writing.push_back(c);
    }
    if (writing.empty() || touching.size() < 2) continue;
    for (size_t c : touching) {
      // The other side of the conflict: a program that writes it, else one that reads it.
      auto not_c = [&](size_t o) { return o != c; };
      const auto writer = std::find_if(writing.begin(), writing.end(), not_c);
      const bool other_writes = writer != writing.end();
      const size_t other = other_writes ? *writer : *std::find_if(touching.begin(), touching.end(), not_c);
      for (const auto& nest : programs[c].nests)
        for (const auto& a : sparse_accesses(nest)) {
          if (a.buffer != bname) continue;
          const bool own_row =
              b->axes.front() == fused.row.axis && structural_equal(a.indices.front(), var(programs[c].row.var));
          STRATA_CHECK(own_row,
                       "fuse_row_loops: {} {} {} at row {}, and {} {} it: fused by row, a row may only touch its own "
                       "row of what another program writes",
                       chain[c].name, a.store ? "writes" : "reads", bname, to_string(a.indices.front()),
                       chain[other].name, other_writes ? "writes" : "reads", bname);
        }
    }
  }
  out.body = Stmt();
  order_params(out);
  return with_rows(out, fused);
}

}  // namespace strata::sc
