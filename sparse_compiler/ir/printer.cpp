#include "sparse_compiler/ir/printer.h"

#include <fmt/format.h>

#include <sstream>

#include "core/error.h"

namespace strata::sc {
namespace {

int precedence(const Expr& e) {
  switch (e.kind()) {
    case NodeKind::Or: return 1;
    case NodeKind::And: return 2;
    case NodeKind::EQ:
    case NodeKind::NE: return 3;
    case NodeKind::LT:
    case NodeKind::LE: return 4;
    case NodeKind::Add:
    case NodeKind::Sub: return 5;
    case NodeKind::Mul:
    case NodeKind::Div:
    case NodeKind::Mod: return 6;
    default: return 7;
  }
}

std::string float_text(double v, Type t) {
  std::string s = t.bits == 32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return t.bits == 32 ? s + "f" : s;
}

class Printer {
 public:
  std::string expr(const Expr& e) {
    if (!e.defined()) return "<undefined>";
    switch (e.kind()) {
      case NodeKind::IntImm: {
        const auto* n = e.as<IntImmNode>();
        if (n->type.is_bool()) return n->value ? "true" : "false";
        return n->type.bits == 32 ? fmt::format("int32({})", n->value) : fmt::format("{}", n->value);
      }
      case NodeKind::FloatImm: return float_text(e.as<FloatImmNode>()->value, e.type());
      case NodeKind::Var: return e.as<VarNode>()->name;
      case NodeKind::Cast: return fmt::format("{}({})", e.type().str(), expr(e.as<CastNode>()->value));
      case NodeKind::Add: return binary(e, e.as<AddNode>()->a, e.as<AddNode>()->b, " + ");
      case NodeKind::Sub: return binary(e, e.as<SubNode>()->a, e.as<SubNode>()->b, " - ");
      case NodeKind::Mul: return binary(e, e.as<MulNode>()->a, e.as<MulNode>()->b, " * ");
      case NodeKind::Div: return binary(e, e.as<DivNode>()->a, e.as<DivNode>()->b, " / ");
      case NodeKind::Mod: return binary(e, e.as<ModNode>()->a, e.as<ModNode>()->b, " % ");
      case NodeKind::EQ: return binary(e, e.as<EQNode>()->a, e.as<EQNode>()->b, " == ");
      case NodeKind::NE: return binary(e, e.as<NENode>()->a, e.as<NENode>()->b, " != ");
      case NodeKind::LT: return binary(e, e.as<LTNode>()->a, e.as<LTNode>()->b, " < ");
      case NodeKind::LE: return binary(e, e.as<LENode>()->a, e.as<LENode>()->b, " <= ");
      case NodeKind::And: return binary(e, e.as<AndNode>()->a, e.as<AndNode>()->b, " && ");
      case NodeKind::Or: return binary(e, e.as<OrNode>()->a, e.as<OrNode>()->b, " || ");
      case NodeKind::Min: return fmt::format("min({}, {})", expr(e.as<MinNode>()->a), expr(e.as<MinNode>()->b));
      case NodeKind::Max: return fmt::format("max({}, {})", expr(e.as<MaxNode>()->a), expr(e.as<MaxNode>()->b));
      case NodeKind::Not: return "!" + wrap(e.as<NotNode>()->a, 7);
      case NodeKind::Select: {
        const auto* n = e.as<SelectNode>();
        return fmt::format("select({}, {}, {})", expr(n->condition), expr(n->true_value), expr(n->false_value));
      }
      case NodeKind::Load: {
        const auto* n = e.as<LoadNode>();
        return fmt::format("{}[{}]", n->buffer, expr(n->index));
      }
      case NodeKind::SparseLoad: {
        const auto* n = e.as<SparseLoadNode>();
        return fmt::format("{}[{}]", n->buffer->name, list(n->indices));
      }
      case NodeKind::Ramp: {
        const auto* n = e.as<RampNode>();
        return fmt::format("ramp({}, {}, {})", expr(n->base), expr(n->stride), n->lanes);
      }
      case NodeKind::Broadcast: {
        const auto* n = e.as<BroadcastNode>();
        return fmt::format("broadcast({}, {})", expr(n->value), n->lanes);
      }
      case NodeKind::Call: {
        const auto* n = e.as<CallNode>();
        std::string args;
        for (const auto& b : n->buffers) args += (args.empty() ? "" : ", ") + b;
        for (const auto& a : n->args) args += (args.empty() ? "" : ", ") + expr(a);
        return fmt::format("{}({})", n->name, args);
      }
      case NodeKind::VectorReduce: {
        const auto* n = e.as<VectorReduceNode>();
        return fmt::format("reduce_{}({})", n->op == ReduceOp::Add ? "add" : "max", expr(n->value));
      }
      default: STRATA_UNREACHABLE("printer: {}", node_kind_name(e.kind()));
    }
  }

  void stmt(const Stmt& s, int ind) {
    if (!s.defined()) return;
    const std::string pad(static_cast<size_t>(ind) * 2, ' ');
    switch (s.kind()) {
      case NodeKind::For: {
        const auto* n = s.as<ForNode>();
        std::string ann;
        for (const auto& [k, v] : n->annotations) ann += fmt::format("{}{}={}", ann.empty() ? " [" : ", ", k, v);
        if (!ann.empty()) ann += "]";
        const char* kw = n->for_kind == ForKind::Serial ? "for" : for_kind_name(n->for_kind);
        out_ << pad << fmt::format("{} ({}, {}, {}){} {{\n", kw, n->var, expr(n->min), expr(n->extent), ann);
        stmt(n->body, ind + 1);
        out_ << pad << "}\n";
        return;
      }
      case NodeKind::Store: {
        const auto* n = s.as<StoreNode>();
        if (n->store_kind == StoreKind::AtomicAdd) {
          out_ << pad << fmt::format("atomic_add({}[{}], {})\n", n->buffer, expr(n->index), expr(n->value));
        } else {
          out_ << pad << fmt::format("{}[{}] = {}{}\n", n->buffer, expr(n->index), expr(n->value),
                                     n->store_kind == StoreKind::Streaming ? "  (streaming)" : "");
        }
        return;
      }
      case NodeKind::SparseStore: {
        const auto* n = s.as<SparseStoreNode>();
        out_ << pad << fmt::format("{}[{}] = {}\n", n->buffer->name, list(n->indices), expr(n->value));
        return;
      }
      case NodeKind::Seq:
        for (const auto& c : s.as<SeqNode>()->stmts) stmt(c, ind);
        return;
      case NodeKind::IfThenElse: {
        const auto* n = s.as<IfThenElseNode>();
        out_ << pad << fmt::format("if ({}) {{\n", expr(n->condition));
        stmt(n->then_case, ind + 1);
        if (n->else_case.defined()) {
          out_ << pad << "} else {\n";
          stmt(n->else_case, ind + 1);
        }
        out_ << pad << "}\n";
        return;
      }
      case NodeKind::LetStmt: {
        const auto* n = s.as<LetStmtNode>();
        out_ << pad << fmt::format("let {} = {}\n", n->var, expr(n->value));
        stmt(n->body, ind);
        return;
      }
      case NodeKind::Allocate: {
        const auto* n = s.as<AllocateNode>();
        out_ << pad << fmt::format("allocate {}: {}[{}] in {} {{\n", n->buffer, n->type.str(), n->size,
                                   memory_scope_name(n->scope));
        stmt(n->body, ind + 1);
        out_ << pad << "}\n";
        return;
      }
      case NodeKind::Prefetch: {
        const auto* n = s.as<PrefetchNode>();
        out_ << pad << fmt::format("prefetch({}[{}])\n", n->buffer, expr(n->index));
        return;
      }
      case NodeKind::Evaluate: out_ << pad << fmt::format("evaluate({})\n", expr(s.as<EvaluateNode>()->value)); return;
      case NodeKind::SparseIteration: {
        const auto* n = s.as<SparseIterationNode>();
        std::string its;
        for (size_t k = 0; k < n->iters.size(); ++k) {
          const bool opens = k == 0 || n->fuse_group[k] != n->fuse_group[k - 1];
          const bool closes = k + 1 == n->iters.size() || n->fuse_group[k + 1] != n->fuse_group[k];
          const bool fused = !(opens && closes);
          if (k) its += ", ";
          if (fused && opens) its += "fused(";
          its += fmt::format("{}: {} ({})", n->iters[k].var, n->iters[k].axis->name, n->iters[k].reduction ? "R" : "S");
          if (fused && closes) its += ")";
        }
        out_ << pad << fmt::format("sp_iter {} [{}] {{\n", n->name, its);
        if (n->init.defined()) {
          out_ << pad << "  init {\n";
          stmt(n->init, ind + 2);
          out_ << pad << "  }\n";
        }
        stmt(n->body, ind + 1);
        out_ << pad << "}\n";
        return;
      }
      default: STRATA_UNREACHABLE("printer: {}", node_kind_name(s.kind()));
    }
  }

  std::string take() { return out_.str(); }

 private:
  std::string wrap(const Expr& e, int outer) {
    std::string s = expr(e);
    return precedence(e) < outer ? "(" + s + ")" : s;
  }
  std::string binary(const Expr& self, const Expr& a, const Expr& b, const char* op) {
    const int p = precedence(self);
    // Left-associative: the right operand needs parentheses at equal precedence.
    return wrap(a, p) + op + wrap(b, p + 1);
  }
  std::string list(const std::vector<Expr>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + expr(v[i]);
    return s;
  }
  std::ostringstream out_;
};

}  // namespace

std::string to_string(const Expr& e) { return Printer().expr(e); }

std::string to_string(const Stmt& s, int indent) {
  Printer p;
  p.stmt(s, indent);
  return p.take();
}

std::string to_string(const Axis& a) {
  Printer p;
  std::string s = fmt::format("axis {}: {}(", a->name, axis_kind_name(a->kind));
  std::vector<std::string> f;
  if (a->parent) f.push_back("parent " + a->parent->name);
  f.push_back("length " + p.expr(a->length));
  if (a->nnz.defined()) f.push_back("nnz " + p.expr(a->nnz));
  if (a->kind == AxisKind::SparseFixed) f.push_back(fmt::format("width {}", a->width));
  if (!a->indptr.empty()) f.push_back("indptr " + a->indptr);
  if (!a->indices.empty()) {
    f.push_back("indices " + a->indices);
    f.push_back(std::string(dtype_name(a->idtype)));
    f.push_back(a->sorted ? "sorted" : "unsorted");
  }
  for (size_t i = 0; i < f.size(); ++i) s += (i ? ", " : "") + f[i];
  return s + ")";
}

std::string to_string(const Kernel& k) {
  std::ostringstream os;
  os << fmt::format("kernel {} [stage {}]\n", k.name, stage_name(k.stage));
  for (const auto& [key, v] : k.attrs) os << fmt::format("  attr {} = {}\n", key, v);
  for (const auto& p : k.params) {
    if (p.kind == ParamKind::Scalar) {
      os << fmt::format("  param {}: int64\n", p.name);
    } else {
      std::string role = p.role == ParamRole::Output ? " (output)"
                         : p.role == ParamRole::Workspace ? " (workspace, " + to_string(p.size) + " elements)"
                                                          : "";
      os << fmt::format("  param {}: {}*{}\n", p.name, dtype_name(p.dtype), role);
    }
  }
  for (const auto& a : k.axes) os << "  " << to_string(a) << "\n";
  for (const auto& b : k.buffers) {
    std::string axes;
    for (size_t i = 0; i < b->axes.size(); ++i) axes += (i ? ", " : "") + b->axes[i]->name;
    os << fmt::format("  buffer {}: {}[{}]\n", b->name, dtype_name(b->dtype), axes);
  }
  if (k.preprocess.defined()) os << "preprocess {\n" << to_string(k.preprocess, 1) << "}\n";
  os << "body {\n" << to_string(k.body, 1) << "}\n";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }
std::ostream& operator<<(std::ostream& os, const Kernel& k) { return os << to_string(k); }

}  // namespace strata::sc
