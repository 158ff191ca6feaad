#include "sparse_compiler/codegen/c_source_emitter.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "core/dtype.h"
#include "core/error.h"

namespace strata::sc {

std::string c_scalar(Type t) {
  if (t.is_bool()) return "bool";
  return std::string(dtype_ctype(t.element_of().to_dtype()));
}

std::string c_identifier(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

void CSourceEmitter::stmt(const Stmt& s, int ind) {
  if (!s.defined()) return;
  const std::string p = pad(ind);
  switch (s.kind()) {
    case NodeKind::For: emit_for(s.as<ForNode>(), ind); return;
    case NodeKind::Store: emit_store(s.as<StoreNode>(), ind); return;
    case NodeKind::Allocate: emit_allocate(s.as<AllocateNode>(), ind); return;
    case NodeKind::Prefetch: emit_prefetch(s.as<PrefetchNode>(), ind); return;
    case NodeKind::Evaluate: emit_evaluate(s.as<EvaluateNode>(), ind); return;
    case NodeKind::Seq:
      for (const auto& c : s.as<SeqNode>()->stmts) stmt(c, ind);
      return;
    case NodeKind::IfThenElse: {
      const auto* n = s.as<IfThenElseNode>();
      os_ << p << fmt::format("if ({}) {{\n", expr(n->condition));
      stmt(n->then_case, ind + 1);
      if (n->else_case.defined()) {
        os_ << p << "} else {\n";
        stmt(n->else_case, ind + 1);
      }
      os_ << p << "}\n";
      return;
    }
    case NodeKind::LetStmt: {
      const auto* n = s.as<LetStmtNode>();
      os_ << p << "{\n";
      os_ << p << fmt::format("  const {} {} = {};\n", c_type(n->value.type()), n->var, expr(n->value));
      stmt(n->body, ind + 1);
      os_ << p << "}\n";
      return;
    }
    default: unexpected(s.kind());
  }
}

void CSourceEmitter::emit_evaluate(const EvaluateNode* n, int ind) {
  os_ << pad(ind) << fmt::format("(void)({});\n", expr(n->value));
}

void CSourceEmitter::bounded_for(const ForNode* n, int ind, const std::string& pragma, const std::string& tail) {
  const std::string p = pad(ind);
  const int id = next_id_++;
  os_ << p << "{\n";
  os_ << p << fmt::format("  const int64_t strata_lo{} = {};\n", id, expr(n->min));
  os_ << p << fmt::format("  const int64_t strata_hi{0} = strata_lo{0} + {1};\n", id, expr(n->extent));
  if (!pragma.empty()) os_ << p << "  " << fmt::format(fmt::runtime(pragma), id) << "\n";
  os_ << p << fmt::format("  for (int64_t {0} = strata_lo{1}; {0} < strata_hi{1}; ++{0}) {{\n", n->var, id);
  stmt(n->body, ind + 2);
  if (!tail.empty()) os_ << p << "    " << tail << "\n";
  os_ << p << "  }\n" << p << "}\n";
}

std::string CSourceEmitter::float_literal(double v, Type t) const {
  if (!std::isfinite(v)) return nonfinite_literal(v, t);
  const bool f32 = t.bits == 32;
  std::string s = f32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return f32 ? s + "f" : s;
}

std::string CSourceEmitter::bin(const Expr& a, const Expr& b, const char* op) {
  return "(" + expr(a) + " " + op + " " + expr(b) + ")";
}

void CSourceEmitter::unexpected(NodeKind kind) const {
  STRATA_UNREACHABLE("the {} emitter got {}", target_, node_kind_name(kind));
}

void CSourceEmitter::check_whole(const std::string& buffer, const Expr& index) const {
  const auto* r = index.as<RampNode>();
  const bool whole = is_zero(index) || (r && is_zero(r->base) && is_one(r->stride) && r->lanes == registers_.at(buffer));
  STRATA_ASSERT(whole, "register variable {} accessed in part; run promote_registers", buffer);
}

std::string CSourceEmitter::expr(const Expr& e) {
  const Type t = e.type();
  switch (e.kind()) {
    case NodeKind::IntImm: {
      const auto* n = e.as<IntImmNode>();
      if (t.is_bool()) return n->value ? "true" : "false";
      return t.bits == 32 ? fmt::format("(int32_t){}", n->value) : fmt::format("(int64_t){}{}", n->value, int64_suffix());
    }
    case NodeKind::FloatImm: return float_literal(e.as<FloatImmNode>()->value, t);
    case NodeKind::Var: return e.as<VarNode>()->name;
    case NodeKind::Cast:
      if (t.is_vector()) return target_expr(e);
      return fmt::format("(({}){})", c_scalar(t), expr(e.as<CastNode>()->value));
    case NodeKind::Add: return bin(e.as<AddNode>()->a, e.as<AddNode>()->b, "+");
    case NodeKind::Sub: return bin(e.as<SubNode>()->a, e.as<SubNode>()->b, "-");
    case NodeKind::Mul: return bin(e.as<MulNode>()->a, e.as<MulNode>()->b, "*");
    case NodeKind::Div: {
      const auto* n = e.as<DivNode>();
      if (t.is_float()) return bin(n->a, n->b, "/");
      STRATA_ASSERT(t.is_scalar(), "vector integer division");
      return fmt::format("strata_floordiv({}, {})", expr(n->a), expr(n->b));
    }
    case NodeKind::Mod: {
      const auto* n = e.as<ModNode>();
      STRATA_ASSERT(t.is_int() && t.is_scalar(), "mod of {}", t.str());
      return fmt::format("strata_floormod({}, {})", expr(n->a), expr(n->b));
    }
    case NodeKind::EQ: return bin(e.as<EQNode>()->a, e.as<EQNode>()->b, "==");
    case NodeKind::NE: return bin(e.as<NENode>()->a, e.as<NENode>()->b, "!=");
    case NodeKind::LT: return bin(e.as<LTNode>()->a, e.as<LTNode>()->b, "<");
    case NodeKind::LE: return bin(e.as<LENode>()->a, e.as<LENode>()->b, "<=");
    case NodeKind::And:
      if (t.is_vector()) return target_expr(e);
      return bin(e.as<AndNode>()->a, e.as<AndNode>()->b, "&&");
    case NodeKind::Or:
      if (t.is_vector()) return target_expr(e);
      return bin(e.as<OrNode>()->a, e.as<OrNode>()->b, "||");
    case NodeKind::Not:
      if (t.is_vector()) return target_expr(e);
      return "(!" + expr(e.as<NotNode>()->a) + ")";
    case NodeKind::Select: {
      const auto* n = e.as<SelectNode>();
      if (n->condition.type().is_vector()) return target_expr(e);
      return fmt::format("({} ? {} : {})", expr(n->condition), expr(n->true_value), expr(n->false_value));
    }
    default: return target_expr(e);
  }
}

}  // namespace strata::sc
