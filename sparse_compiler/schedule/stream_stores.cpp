// The stream_stores primitive: non-temporal stores for a write-once output.
#include "sparse_compiler/ir/mutator.h"
#include "sparse_compiler/ir/visitor.h"
#include "sparse_compiler/schedule/schedule.h"

namespace strata::sc {

void Schedule::stream_stores(const std::string& buffer) {
  const Param* b = k_.find_param(buffer);
  STRATA_SCHED_CHECK(b && b->is_buffer() && b->role == ParamRole::Output,
                     "stream_stores({}): {} is not an output buffer parameter", buffer, buffer);
  struct Checker : IRVisitor {
    const std::string& name;
    int stores = 0;
    explicit Checker(const std::string& n) : name(n) {}
    using IRVisitor::visit;
    void visit(const StoreNode* st) override {
      IRVisitor::visit(st);
      if (st->buffer != name) return;
      ++stores;
      STRATA_SCHED_CHECK(st->store_kind == StoreKind::Plain,
                         "stream_stores({}): a store to {} is not plain (atomic or already streaming)", name, name);
      bool reads = false;
      for_each_expr(st->value, [&](const Expr& e) {
        if (const auto* l = e.as<LoadNode>(); l && l->buffer == name) reads = true;
      });
      STRATA_SCHED_CHECK(!reads,
                         "stream_stores({}): a store to {} reads {} (accumulates in memory); cache_write it first so "
                         "{} is written once",
                         name, name, name, name);
    }
  } checker(buffer);
  checker.visit_stmt(k_.body);
  const int stores = checker.stores;
  STRATA_SCHED_CHECK(stores > 0, "stream_stores({}): the kernel does not store to {}", buffer, buffer);

  struct Streamer : IRMutator {
    const std::string& name;
    explicit Streamer(const std::string& n) : name(n) {}
    using IRMutator::visit;
    Stmt visit(const StoreNode* op, const Stmt& self) override {
      if (op->buffer != name) return IRMutator::visit(op, self);
      return store(op->buffer, mutate(op->index), mutate(op->value), StoreKind::Streaming);
    }
  } streamer(buffer);
  commit(streamer.mutate(k_.body), fmt::format("stream_stores({})", buffer));
}

}  // namespace strata::sc
