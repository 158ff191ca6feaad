#include "sparse_compiler/passes/promote_registers.h"

#include <map>

#include <fmt/format.h>

#include "core/log.h"
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"

namespace strata::sc {
namespace {

// The segment [start, start + lanes) an access covers, if its index is constant.
bool segment_of(const Expr& index, int64_t& start, int& lanes) {
  if (const int64_t* c = as_const_int(index)) {
    start = *c;
    lanes = 1;
    return true;
  }
  if (const auto* r = index.as<RampNode>()) {
    const int64_t *b = as_const_int(r->base), *s = as_const_int(r->stride);
    if (b && s && *s == 1) {
      start = *b;
      lanes = r->lanes;
      return true;
    }
  }
  return false;
}

class SegmentCollector : public IRVisitor {
 public:
  explicit SegmentCollector(std::string b) : buf_(std::move(b)) {}
  std::map<int64_t, int> segments;  // start -> lanes
  bool ok = true;

 protected:
  void visit(const LoadNode* op) override {
    if (op->buffer == buf_) note(op->index);
    IRVisitor::visit(op);
  }
  void visit(const StoreNode* op) override {
    if (op->buffer == buf_) note(op->index);
    IRVisitor::visit(op);
  }
  // An intrinsic that reads the local as an array (warp_reduce_add, a search) needs
  // it kept whole.
  void visit(const CallNode* op) override {
    for (const auto& b : op->buffers) ok &= b != buf_;
    IRVisitor::visit(op);
  }

 private:
  void note(const Expr& index) {
    int64_t s;
    int l;
    if (!segment_of(index, s, l)) {
      ok = false;
      return;
    }
    auto [it, inserted] = segments.emplace(s, l);
    if (!inserted && it->second != l) ok = false;
  }
  std::string buf_;
};

class Renamer : public IRMutator {
 public:
  Renamer(std::string b, std::map<int64_t, std::string> names) : buf_(std::move(b)), names_(std::move(names)) {}

 protected:
  Expr visit(const LoadNode* op, const Expr& self) override {
    if (op->buffer != buf_) return IRMutator::visit(op, self);
    int64_t s;
    int l;
    segment_of(op->index, s, l);
    return load(op->type.element_of(), names_.at(s), whole(l));
  }
  Stmt visit(const StoreNode* op, const Stmt& self) override {
    if (op->buffer != buf_) return IRMutator::visit(op, self);
    int64_t s;
    int l;
    segment_of(op->index, s, l);
    return store(names_.at(s), whole(l), mutate(op->value), op->store_kind);
  }

 private:
  static Expr whole(int lanes) { return lanes == 1 ? make_int(0) : ramp(make_int(0), make_int(1), lanes); }
  std::string buf_;
  std::map<int64_t, std::string> names_;
};

class Promoter : public IRMutator {
 protected:
  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    if (op->scope != MemoryScope::Register)
      return body.same_as(op->body) ? self : allocate(op->buffer, op->type, op->size, op->scope, body);
    SegmentCollector c(op->buffer);
    c.visit_stmt(body);
    int64_t end = 0;
    bool tiled = c.ok;
    for (const auto& [s, l] : c.segments) {
      tiled &= s >= end && s + l <= op->size;  // no overlap, in range
      end = s + l;
    }
    if (!tiled) {
      log_debug("promote_registers: {} is not accessed in whole segments; kept as an array", op->buffer);
      return allocate(op->buffer, op->type, op->size, MemoryScope::Stack, body);
    }
    std::map<int64_t, std::string> names;
    for (const auto& [s, l] : c.segments) names[s] = fmt::format("{}_{}", op->buffer, s);
    Renamer r(op->buffer, names);
    Stmt out = r.mutate(body);
    for (auto it = c.segments.rbegin(); it != c.segments.rend(); ++it)
      out = allocate(names[it->first], op->type, it->second, MemoryScope::Register, out);
    return out;
  }
};

}  // namespace

Kernel promote_registers(const Kernel& k) {
  k.require_stage(Stage::Loops, "promote_registers");
  Promoter p;
  Kernel out = k;
  out.body = p.mutate(k.body);
  out.preprocess = p.mutate(k.preprocess);
  return out;
}

}  // namespace strata::sc
