#include "sparse_compiler/ir/expr.h"

#include <cmath>

#include "core/error.h"

namespace strata::sc {

const char* node_kind_name(NodeKind k) {
  switch (k) {
#define STRATA_X(T) \
  case NodeKind::T: return #T;
    STRATA_IR_EXPRS(STRATA_X)
    STRATA_IR_STMTS(STRATA_X)
#undef STRATA_X
  }
  return "?";
}

Expr::Expr(int64_t v) : Expr(make_int(v)) {}
Expr::Expr(int v) : Expr(make_int(v)) {}
Expr::Expr(double v) : Expr(make_float(v)) {}

const int64_t* as_const_int(const Expr& e) {
  const auto* n = e.as<IntImmNode>();
  return n ? &n->value : nullptr;
}
const double* as_const_float(const Expr& e) {
  const auto* n = e.as<FloatImmNode>();
  return n ? &n->value : nullptr;
}
bool is_const(const Expr& e, int64_t v) {
  if (const int64_t* p = as_const_int(e)) return *p == v;
  if (const double* f = as_const_float(e)) return *f == static_cast<double>(v);
  if (const auto* b = e.as<BroadcastNode>()) return is_const(b->value, v);
  return false;
}
bool is_zero(const Expr& e) { return is_const(e, 0); }
bool is_one(const Expr& e) { return is_const(e, 1); }

Expr make_int(int64_t v, Type t) {
  STRATA_ASSERT(t.is_int() && t.is_scalar(), "make_int with type {}", t.str());
  if (t.bits == 32) v = static_cast<int32_t>(v);
  return Expr(std::make_shared<IntImmNode>(t, v));
}
Expr make_float(double v, Type t) {
  STRATA_ASSERT(t.is_float() && t.is_scalar(), "make_float with type {}", t.str());
  if (t.bits == 32) v = static_cast<float>(v);
  return Expr(std::make_shared<FloatImmNode>(t, v));
}
Expr make_bool(bool v) { return Expr(std::make_shared<IntImmNode>(Type::boolean(), v ? 1 : 0)); }
Expr make_zero(Type t) {
  Expr s = t.is_float() ? make_float(0, t.element_of())
                        : (t.is_bool() ? make_bool(false) : make_int(0, t.element_of()));
  return t.is_vector() ? broadcast(s, t.lanes) : s;
}
Expr make_one(Type t) {
  Expr s = t.is_float() ? make_float(1, t.element_of()) : make_int(1, t.element_of());
  return t.is_vector() ? broadcast(s, t.lanes) : s;
}

Expr var(const std::string& name, Type t) {
  STRATA_ASSERT(!name.empty(), "variable with an empty name");
  return Expr(std::make_shared<VarNode>(t, name));
}

Expr cast(Type t, Expr v) {
  STRATA_ASSERT(v.defined(), "cast of an undefined expression");
  if (v.type() == t) return v;
  if (t.lanes != v.type().lanes) {
    STRATA_ASSERT(v.type().is_scalar(), "cast {} to {}", v.type().str(), t.str());
    return broadcast(cast(t.element_of(), v), t.lanes);
  }
  if (const int64_t* i = as_const_int(v); i && t.is_scalar()) {
    if (t.is_float()) return make_float(static_cast<double>(*i), t);
    if (t.is_int()) return make_int(*i, t);
  }
  if (const double* f = as_const_float(v); f && t.is_scalar()) {
    if (t.is_float()) return make_float(*f, t);
  }
  return Expr(std::make_shared<CastNode>(t, std::move(v)));
}

namespace {

bool is_imm(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

// Re-types an immediate to t (scalar element of t, broadcast when t is a vector).
Expr retype_imm(const Expr& e, Type t) {
  Type el = t.element_of();
  Expr s;
  if (const int64_t* i = as_const_int(e)) {
    s = el.is_float() ? make_float(static_cast<double>(*i), el)
                      : (el.is_bool() ? make_bool(*i != 0) : make_int(*i, el));
  } else {
    const double* f = as_const_float(e);
    STRATA_ASSERT(el.is_float(), "float literal {} used where {} is expected", *f, t.str());
    s = make_float(*f, el);
  }
  return t.is_vector() ? broadcast(s, t.lanes) : s;
}

// Makes a and b the same type: immediates adopt the other side's type, scalars are
// broadcast to the other side's lanes. Anything else must already match.
void match_types(Expr& a, Expr& b, const char* op) {
  STRATA_ASSERT(a.defined() && b.defined(), "{} of an undefined expression", op);
  if (a.type() == b.type()) return;
  if (is_imm(b) && b.type().is_scalar()) {
    b = retype_imm(b, a.type());
    return;
  }
  if (is_imm(a) && a.type().is_scalar()) {
    a = retype_imm(a, b.type());
    return;
  }
  if (a.type().element_of() == b.type().element_of()) {
    if (a.type().is_scalar()) {
      a = broadcast(a, b.type().lanes);
      return;
    }
    if (b.type().is_scalar()) {
      b = broadcast(b, a.type().lanes);
      return;
    }
  }
  STRATA_UNREACHABLE("{}: operand types differ: {} vs {}", op, a.type().str(), b.type().str());
}

template <class Node>
Expr make_binary(Expr a, Expr b, const char* op, bool boolean_result = false) {
  match_types(a, b, op);
  Type t = boolean_result ? Type::boolean(a.type().lanes) : a.type();
  return Expr(std::make_shared<Node>(t, std::move(a), std::move(b)));
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace

Expr add(Expr a, Expr b) {
  match_types(a, b, "add");
  if (is_zero(b)) return a;
  if (is_zero(a)) return b;
  if (auto *x = as_const_int(a), *y = as_const_int(b); x && y) return make_int(*x + *y, a.type());
  return make_binary<AddNode>(std::move(a), std::move(b), "add");
}
Expr sub(Expr a, Expr b) {
  match_types(a, b, "sub");
  if (is_zero(b)) return a;
  if (auto *x = as_const_int(a), *y = as_const_int(b); x && y) return make_int(*x - *y, a.type());
  return make_binary<SubNode>(std::move(a), std::move(b), "sub");
}
Expr mul(Expr a, Expr b) {
  match_types(a, b, "mul");
  if (is_one(b)) return a;
  if (is_one(a)) return b;
  if (a.type().is_int() && (is_zero(a) || is_zero(b))) return make_zero(a.type());
  if (auto *x = as_const_int(a), *y = as_const_int(b); x && y) return make_int(*x * *y, a.type());
  return make_binary<MulNode>(std::move(a), std::move(b), "mul");
}
Expr div(Expr a, Expr b) {
  match_types(a, b, "div");
  if (is_one(b)) return a;
  if (auto *x = as_const_int(a), *y = as_const_int(b); x && y && *y != 0) return make_int(floor_div(*x, *y), a.type());
  return make_binary<DivNode>(std::move(a), std::move(b), "div");
}
Expr mod(Expr a, Expr b) {
  match_types(a, b, "mod");
  if (auto *x = as_const_int(a), *y = as_const_int(b); x && y && *y != 0) return make_int(floor_mod(*x, *y), a.type());
  return make_binary<ModNode>(std::move(a), std::move(b), "mod");
}
Expr min(Expr a, Expr b) {
  match_types(a, b, "min");
  if (auto *x = as_const_int(a), *y = as_const_int(b); x && y) return make_int(std::min(*x, *y), a.type());
  return make_binary<MinNode>(std::move(a), std::move(b), "min");
}
Expr max(Expr a, Expr b) {
  match_types(a, b, "max");
  if (auto *x = as_const_int(a), *y = as_const_int(b); x && y) return make_int(std::max(*x, *y), a.type());
  return make_binary<MaxNode>(std::move(a), std::move(b), "max");
}
Expr eq(Expr a, Expr b) { return make_binary<EQNode>(std::move(a), std::move(b), "eq", true); }
Expr ne(Expr a, Expr b) { return make_binary<NENode>(std::move(a), std::move(b), "ne", true); }
Expr lt(Expr a, Expr b) { return make_binary<LTNode>(std::move(a), std::move(b), "lt", true); }
Expr le(Expr a, Expr b) { return make_binary<LENode>(std::move(a), std::move(b), "le", true); }
Expr gt(Expr a, Expr b) { return lt(std::move(b), std::move(a)); }
Expr ge(Expr a, Expr b) { return le(std::move(b), std::move(a)); }

Expr logical_and(Expr a, Expr b) {
  STRATA_ASSERT(a.type().is_bool() && b.type().is_bool(), "logical and of {} and {}", a.type().str(), b.type().str());
  return make_binary<AndNode>(std::move(a), std::move(b), "and", true);
}
Expr logical_or(Expr a, Expr b) {
  STRATA_ASSERT(a.type().is_bool() && b.type().is_bool(), "logical or of {} and {}", a.type().str(), b.type().str());
  return make_binary<OrNode>(std::move(a), std::move(b), "or", true);
}
Expr logical_not(Expr a) {
  STRATA_ASSERT(a.type().is_bool(), "logical not of {}", a.type().str());
  return Expr(std::make_shared<NotNode>(a.type(), std::move(a)));
}

Expr select(Expr c, Expr t, Expr f) {
  STRATA_ASSERT(c.defined() && c.type().is_bool(), "select condition must be bool");
  match_types(t, f, "select");
  // A scalar condition may choose between whole vectors; a vector condition
  // chooses per lane and widens scalar values.
  if (c.type().is_vector() && t.type().is_scalar()) {
    t = broadcast(t, c.type().lanes);
    f = broadcast(f, c.type().lanes);
  }
  STRATA_ASSERT(c.type().is_scalar() || c.type().lanes == t.type().lanes, "select: condition has {} lanes, values {}",
                c.type().lanes, t.type().lanes);
  Type ty = t.type();
  return Expr(std::make_shared<SelectNode>(ty, std::move(c), std::move(t), std::move(f)));
}

Expr load(Type elem, const std::string& buffer, Expr index) {
  STRATA_ASSERT(!buffer.empty() && index.defined() && index.type().is_int(), "load from '{}' needs an int index",
                buffer);
  STRATA_ASSERT(elem.is_scalar(), "load element type must be scalar");
  Type t = elem.with_lanes(index.type().lanes);
  return Expr(std::make_shared<LoadNode>(t, buffer, std::move(index)));
}

Expr sparse_load(const SparseBuffer& b, std::vector<Expr> indices) {
  STRATA_ASSERT(b && static_cast<int>(indices.size()) == b->ndim(), "sparse load of {} with {} indices for {} axes",
                b ? b->name : "?", indices.size(), b ? b->ndim() : 0);
  for (auto& i : indices) {
    STRATA_ASSERT(i.defined() && i.type().is_int() && i.type().is_scalar(), "sparse load of {}: bad index",
                  b->name);
    if (i.type() != Type::i64()) i = cast(Type::i64(), i);
  }
  return Expr(std::make_shared<SparseLoadNode>(Type::from_dtype(b->dtype), b, std::move(indices)));
}

Expr ramp(Expr base, Expr stride, int lanes) {
  STRATA_ASSERT(lanes > 1 && base.type().is_scalar(), "ramp needs a scalar base and lanes > 1");
  match_types(base, stride, "ramp");
  Type t = base.type().with_lanes(lanes);
  return Expr(std::make_shared<RampNode>(t, std::move(base), std::move(stride), lanes));
}

Expr broadcast(Expr v, int lanes) {
  STRATA_ASSERT(v.defined() && v.type().is_scalar() && lanes > 1, "broadcast needs a scalar and lanes > 1");
  Type t = v.type().with_lanes(lanes);
  return Expr(std::make_shared<BroadcastNode>(t, std::move(v), lanes));
}

Expr call(Type t, const std::string& name, std::vector<Expr> args, std::vector<std::string> buffers) {
  for (const auto& a : args) STRATA_ASSERT(a.defined(), "call {} with an undefined argument", name);
  return Expr(std::make_shared<CallNode>(t, name, std::move(args), std::move(buffers)));
}

Expr vector_reduce(ReduceOp op, Expr v) {
  STRATA_ASSERT(v.defined() && v.type().is_vector(), "vector_reduce needs a vector");
  Type t = v.type().element_of();
  return Expr(std::make_shared<VectorReduceNode>(t, op, std::move(v)));
}

namespace {
Expr math1(const char* name, Expr x) {
  STRATA_ASSERT(x.type().is_float(), "{} of a non-float {}", name, x.type().str());
  Type t = x.type();
  return call(t, name, {std::move(x)});
}
}  // namespace

Expr exp(Expr x) { return math1("exp", std::move(x)); }
Expr log(Expr x) { return math1("log", std::move(x)); }
Expr sqrt(Expr x) { return math1("sqrt", std::move(x)); }
Expr abs(Expr x) {
  Type t = x.type();
  return call(t, "abs", {std::move(x)});
}

Expr upper_bound(const std::string& array, Expr lo, Expr hi, Expr value) {
  return call(Type::i64(), "upper_bound", {cast(Type::i64(), std::move(lo)), cast(Type::i64(), std::move(hi)),
                                           cast(Type::i64(), std::move(value))},
              {array});
}

Expr warp_reduce_add(Type t, const std::string& lanes, int64_t width) {
  STRATA_ASSERT(t.is_scalar() && width >= 1 && width <= 32 && (width & (width - 1)) == 0,
                "warp_reduce_add over {} lanes of {} (expected a scalar type and a power of two up to 32)", width,
                t.str());
  return call(t, kWarpReduceAdd, {make_int(width)}, {lanes});
}

Expr lane_sums(std::vector<Expr> vectors) {
  const int w = static_cast<int>(vectors.size());
  STRATA_ASSERT(w >= 2 && (w & (w - 1)) == 0, "lane_sums of {} vectors (expected a power of two, at least 2)", w);
  const Type t = vectors[0].type();
  for (const Expr& v : vectors)
    STRATA_ASSERT(v.type() == t && t.lanes == w, "lane_sums of {} vectors: each must be {} lanes of one type, got {}",
                  w, w, v.type().str());
  return call(t, kLaneSums, std::move(vectors));
}

bool call_has_side_effects(const std::string& name) { return name == kSyncThreads; }

}  // namespace strata::sc
