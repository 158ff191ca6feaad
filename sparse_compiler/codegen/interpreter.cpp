#include "sparse_compiler/codegen/interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "sparse_compiler/ir/printer.h"
#include "sparse_compiler/ir/stmt.h"

namespace strata::sc {
namespace {

// A value with one entry per lane; ints and bools in `i`, floats in `f`.
struct Val {
  Type t;
  std::vector<int64_t> i;
  std::vector<double> f;
  int lanes() const { return t.lanes; }
  int64_t as_int(int l = 0) const { return i.at(l); }
  double as_float(int l = 0) const { return t.is_float() ? f.at(l) : static_cast<double>(i.at(l)); }
};

Val make_val(Type t) {
  Val v;
  v.t = t;
  if (t.is_float()) v.f.assign(t.lanes, 0.0);
  else v.i.assign(t.lanes, 0);
  return v;
}

double round_to(Type t, double x) { return t.bits == 32 ? static_cast<double>(static_cast<float>(x)) : x; }
int64_t wrap_int(Type t, int64_t x) { return t.bits == 32 ? static_cast<int32_t>(x) : x; }
int64_t floor_div(int64_t a, int64_t b) {
  STRATA_CHECK(b != 0, "integer division by zero in interpreted kernel");
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

class Machine {
 public:
  using Buffers = std::map<std::string, std::tuple<void*, DType, int64_t>>;
  Machine(Buffers& b, std::map<std::string, int64_t>& scalars) : buffers_(b) {
    for (const auto& [n, v] : scalars) {
      Val x = make_val(Type::i64());
      x.i[0] = v;
      vars_[n].push_back(x);
    }
  }

  void exec(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case NodeKind::For: {
        const auto* n = s.as<ForNode>();
        const int64_t lo = eval(n->min).as_int(), ext = eval(n->extent).as_int();
        auto& slot = vars_[n->var];
        slot.push_back(make_val(Type::i64()));
        for (int64_t k = 0; k < ext; ++k) {
          slot.back().i[0] = lo + k;
          exec(n->body);
        }
        slot.pop_back();
        return;
      }
      case NodeKind::Store: {
        const auto* n = s.as<StoreNode>();
        Val idx = eval(n->index), v = eval(n->value);
        for (int l = 0; l < idx.lanes(); ++l) {
          if (n->store_kind == StoreKind::AtomicAdd) {
            Val old = read(n->buffer, idx.as_int(l), v.t.element_of());
            write(n->buffer, idx.as_int(l), v.t.is_float() ? old.as_float() + v.as_float(l) : 0.0,
                  old.t.is_float() ? 0 : old.as_int() + v.as_int(l));
          } else {
            write(n->buffer, idx.as_int(l), v.t.is_float() ? v.f[l] : 0.0, v.t.is_float() ? 0 : v.i[l]);
          }
        }
        return;
      }
      case NodeKind::Seq:
        for (const auto& c : s.as<SeqNode>()->stmts) exec(c);
        return;
      case NodeKind::IfThenElse: {
        const auto* n = s.as<IfThenElseNode>();
        if (eval(n->condition).as_int()) exec(n->then_case);
        else exec(n->else_case);
        return;
      }
      case NodeKind::LetStmt: {
        const auto* n = s.as<LetStmtNode>();
        vars_[n->var].push_back(eval(n->value));
        exec(n->body);
        vars_[n->var].pop_back();
        return;
      }
      case NodeKind::Allocate: {
        const auto* n = s.as<AllocateNode>();
        std::vector<char> mem(static_cast<size_t>(n->size * (n->type.bits / 8)), 0);
        // Poison float locals so reading before writing shows up as NaN.
        if (n->type.is_float())
          for (int64_t k = 0; k < n->size; ++k) write_raw(mem.data(), n->type.to_dtype(), k, NAN, 0);
        auto saved = buffers_.find(n->buffer);
        STRATA_ASSERT(saved == buffers_.end(), "allocation {} shadows a buffer", n->buffer);
        buffers_[n->buffer] = {mem.data(), n->type.to_dtype(), n->size};
        exec(n->body);
        buffers_.erase(n->buffer);
        return;
      }
      case NodeKind::Prefetch: {
        eval(s.as<PrefetchNode>()->index);  // no effect; may be out of range
        return;
      }
      case NodeKind::Evaluate: eval(s.as<EvaluateNode>()->value); return;
      default:
        STRATA_UNREACHABLE("the interpreter runs stage-III IR; found {}", node_kind_name(s.kind()));
    }
  }

  Val eval(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::IntImm: {
        Val v = make_val(e.type());
        v.i[0] = e.as<IntImmNode>()->value;
        return v;
      }
      case NodeKind::FloatImm: {
        Val v = make_val(e.type());
        v.f[0] = e.as<FloatImmNode>()->value;
        return v;
      }
      case NodeKind::Var: {
        const auto* n = e.as<VarNode>();
        auto it = vars_.find(n->name);
        STRATA_ASSERT(it != vars_.end() && !it->second.empty(), "unbound variable {}", n->name);
        return it->second.back();
      }
      case NodeKind::Cast: {
        Val x = eval(e.as<CastNode>()->value);
        Val v = make_val(e.type());
        for (int l = 0; l < v.lanes(); ++l) {
          if (v.t.is_float()) v.f[l] = round_to(v.t, x.as_float(l));
          else if (v.t.is_bool()) v.i[l] = x.t.is_float() ? x.f[l] != 0 : x.i[l] != 0;
          else v.i[l] = wrap_int(v.t, x.t.is_float() ? static_cast<int64_t>(x.f[l]) : x.i[l]);
        }
        return v;
      }
      case NodeKind::Add: return arith(e, e.as<AddNode>()->a, e.as<AddNode>()->b, '+');
      case NodeKind::Sub: return arith(e, e.as<SubNode>()->a, e.as<SubNode>()->b, '-');
      case NodeKind::Mul: return arith(e, e.as<MulNode>()->a, e.as<MulNode>()->b, '*');
      case NodeKind::Div: return arith(e, e.as<DivNode>()->a, e.as<DivNode>()->b, '/');
      case NodeKind::Mod: return arith(e, e.as<ModNode>()->a, e.as<ModNode>()->b, '%');
      case NodeKind::Min: return arith(e, e.as<MinNode>()->a, e.as<MinNode>()->b, 'm');
      case NodeKind::Max: return arith(e, e.as<MaxNode>()->a, e.as<MaxNode>()->b, 'M');
      case NodeKind::EQ: return compare(e.as<EQNode>()->a, e.as<EQNode>()->b, e.type(), 0);
      case NodeKind::NE: return compare(e.as<NENode>()->a, e.as<NENode>()->b, e.type(), 1);
      case NodeKind::LT: return compare(e.as<LTNode>()->a, e.as<LTNode>()->b, e.type(), 2);
      case NodeKind::LE: return compare(e.as<LENode>()->a, e.as<LENode>()->b, e.type(), 3);
      case NodeKind::And: {
        Val a = eval(e.as<AndNode>()->a);
        Val v = make_val(e.type());
        bool any = false;
        for (int l = 0; l < v.lanes(); ++l) any |= a.i[l] != 0;
        Val b = any ? eval(e.as<AndNode>()->b) : make_val(e.type());
        for (int l = 0; l < v.lanes(); ++l) v.i[l] = a.i[l] && b.i[l];
        return v;
      }
      case NodeKind::Or: {
        Val a = eval(e.as<OrNode>()->a), b = eval(e.as<OrNode>()->b);
        Val v = make_val(e.type());
        for (int l = 0; l < v.lanes(); ++l) v.i[l] = a.i[l] || b.i[l];
        return v;
      }
      case NodeKind::Not: {
        Val a = eval(e.as<NotNode>()->a);
        for (auto& x : a.i) x = !x;
        return a;
      }
      case NodeKind::Select: {
        const auto* n = e.as<SelectNode>();
        Val c = eval(n->condition);
        if (c.lanes() == 1) return c.i[0] ? eval(n->true_value) : eval(n->false_value);
        Val t = eval(n->true_value), f = eval(n->false_value);
        for (int l = 0; l < c.lanes(); ++l) {
          if (c.i[l]) continue;
          if (t.t.is_float()) t.f[l] = f.f[l];
          else t.i[l] = f.i[l];
        }
        return t;
      }
      case NodeKind::Load: {
        const auto* n = e.as<LoadNode>();
        Val idx = eval(n->index);
        Val v = make_val(e.type());
        for (int l = 0; l < idx.lanes(); ++l) {
          Val x = read(n->buffer, idx.as_int(l), e.type().element_of());
          if (v.t.is_float()) v.f[l] = x.f[0];
          else v.i[l] = x.i[0];
        }
        return v;
      }
      case NodeKind::Ramp: {
        const auto* n = e.as<RampNode>();
        Val b = eval(n->base), s = eval(n->stride);
        Val v = make_val(e.type());
        for (int l = 0; l < n->lanes; ++l) {
          if (v.t.is_float()) v.f[l] = round_to(v.t, b.f[0] + l * s.f[0]);
          else v.i[l] = b.i[0] + l * s.i[0];
        }
        return v;
      }
      case NodeKind::Broadcast: {
        const auto* n = e.as<BroadcastNode>();
        Val x = eval(n->value);
        Val v = make_val(e.type());
        for (int l = 0; l < n->lanes; ++l) {
          if (v.t.is_float()) v.f[l] = x.f[0];
          else v.i[l] = x.i[0];
        }
        return v;
      }
      case NodeKind::Call: return call(e.as<CallNode>());
      case NodeKind::VectorReduce: {
        const auto* n = e.as<VectorReduceNode>();
        Val x = eval(n->value);
        Val v = make_val(e.type());
        for (int l = 0; l < x.lanes(); ++l) {
          if (v.t.is_float()) {
            // Max as the emitters' lane loop: s = v[l] > s ? v[l] : s.
            v.f[0] = l == 0 ? x.f[0]
                            : (n->op == ReduceOp::Add ? round_to(v.t, v.f[0] + x.f[l])
                                                      : (x.f[l] > v.f[0] ? x.f[l] : v.f[0]));
          } else {
            v.i[0] = l == 0 ? x.i[0] : (n->op == ReduceOp::Add ? v.i[0] + x.i[l] : std::max(v.i[0], x.i[l]));
          }
        }
        return v;
      }
      default: STRATA_UNREACHABLE("the interpreter runs stage-III IR; found {}", node_kind_name(e.kind()));
    }
  }

 private:
  Val arith(const Expr& e, const Expr& ea, const Expr& eb, char op) {
    Val a = eval(ea), b = eval(eb);
    Val v = make_val(e.type());
    for (int l = 0; l < v.lanes(); ++l) {
      if (v.t.is_float()) {
        double x = a.f[l], y = b.f[l], r = 0;
        switch (op) {
          case '+': r = x + y; break;
          case '-': r = x - y; break;
          case '*': r = x * y; break;
          case '/': r = x / y; break;
          case '%': r = std::fmod(x, y); break;
          // As every emitter writes them (x86 minps / maxps): y when either is NaN
          // or they compare equal (-0 and +0), not std::min / std::max's x.
          case 'm':
            r = x < y ? x : y;
            break;
          case 'M':
            r = x > y ? x : y;
            break;
        }
        v.f[l] = round_to(v.t, r);
      } else {
        int64_t x = a.i[l], y = b.i[l], r = 0;
        switch (op) {
          case '+': r = x + y; break;
          case '-': r = x - y; break;
          case '*': r = x * y; break;
          case '/': r = floor_div(x, y); break;
          case '%': r = x - floor_div(x, y) * y; break;
          case 'm': r = std::min(x, y); break;
          case 'M': r = std::max(x, y); break;
        }
        v.i[l] = wrap_int(v.t, r);
      }
    }
    return v;
  }

  Val compare(const Expr& ea, const Expr& eb, Type t, int op) {
    Val a = eval(ea), b = eval(eb);
    Val v = make_val(t);
    for (int l = 0; l < v.lanes(); ++l) {
      double x = a.as_float(l), y = b.as_float(l);
      bool r = false;
      if (a.t.is_float()) {
        r = op == 0 ? x == y : op == 1 ? x != y : op == 2 ? x < y : x <= y;
      } else {
        int64_t p = a.i[l], q = b.i[l];
        r = op == 0 ? p == q : op == 1 ? p != q : op == 2 ? p < q : p <= q;
      }
      v.i[l] = r;
    }
    return v;
  }

  Val call(const CallNode* n) {
    Val v = make_val(n->type);
    if (n->name == "upper_bound" || n->name == "find" || n->name == "lower_bound") {
      const int64_t lo = eval(n->args[0]).as_int(), hi = eval(n->args[1]).as_int(), x = eval(n->args[2]).as_int();
      int64_t a = lo, b = hi;
      const bool lower = n->name == "lower_bound";
      while (a < b) {  // first p in [lo, hi) with array[p] > x (>= x for lower_bound)
        int64_t mid = a + (b - a) / 2;
        const int64_t y = read(n->buffers[0], mid, Type::i64()).as_int();
        if (lower ? y >= x : y > x) b = mid;
        else a = mid + 1;
      }
      if (n->name != "find") {
        v.i[0] = a;
      } else {
        v.i[0] = (a > lo && read(n->buffers[0], a - 1, Type::i64()).as_int() == x) ? a - 1 : -1;
      }
      return v;
    }
    if (n->name == kWarpReduceAdd) {
      // Serially, the lanes were all written before the reduction runs: sum them.
      const int64_t width = eval(n->args.at(0)).as_int();
      for (int64_t l = 0; l < width; ++l) {
        Val x = read(n->buffers.at(0), l, n->type);
        if (v.t.is_float()) v.f[0] = l == 0 ? x.f[0] : round_to(v.t, v.f[0] + x.f[0]);
        else v.i[0] = wrap_int(v.t, v.i[0] + x.i[0]);
      }
      return v;
    }
    if (n->name == kLaneSums) {  // lane k: the sum of argument k's lanes, in lane order
      for (int k = 0; k < v.lanes(); ++k) {
        const Val x = eval(n->args.at(k));
        for (int l = 0; l < x.lanes(); ++l) {
          if (v.t.is_float())
            v.f[k] = l == 0 ? x.f[l] : round_to(v.t, v.f[k] + x.f[l]);
          else
            v.i[k] = l == 0 ? x.i[l] : wrap_int(v.t, v.i[k] + x.i[l]);
        }
      }
      return v;
    }
    if (n->name == kSyncThreads) return v;  // one thread at a time: nothing to wait for
    Val x = eval(n->args.at(0));
    for (int l = 0; l < v.lanes(); ++l) {
      double a = x.as_float(l), r;
      if (n->name == "exp") r = std::exp(a);
      else if (n->name == "log") r = std::log(a);
      else if (n->name == "sqrt") r = std::sqrt(a);
      else if (n->name == "abs") r = std::fabs(a);
      else STRATA_UNREACHABLE("unknown intrinsic {}", n->name);
      if (v.t.is_float()) v.f[l] = round_to(v.t, r);
      else v.i[l] = static_cast<int64_t>(r);
    }
    return v;
  }

  static void write_raw(void* base, DType dt, int64_t k, double f, int64_t i) {
    switch (dt) {
      case DType::F32: static_cast<float*>(base)[k] = static_cast<float>(f); break;
      case DType::F64: static_cast<double*>(base)[k] = f; break;
      case DType::I32: static_cast<int32_t*>(base)[k] = static_cast<int32_t>(i); break;
      case DType::I64: static_cast<int64_t*>(base)[k] = i; break;
    }
  }

  std::tuple<void*, DType, int64_t>& buffer(const std::string& name, int64_t k) {
    auto it = buffers_.find(name);
    STRATA_ASSERT(it != buffers_.end(), "unbound buffer {}", name);
    STRATA_ASSERT(k >= 0 && k < std::get<2>(it->second), "out-of-bounds access {}[{}] (size {})", name, k,
                  std::get<2>(it->second));
    return it->second;
  }

  Val read(const std::string& name, int64_t k, Type t) {
    auto& [data, dt, size] = buffer(name, k);
    Val v = make_val(t);
    double f = 0;
    int64_t i = 0;
    switch (dt) {
      case DType::F32: f = static_cast<float*>(data)[k]; break;
      case DType::F64: f = static_cast<double*>(data)[k]; break;
      case DType::I32: i = static_cast<int32_t*>(data)[k]; break;
      case DType::I64: i = static_cast<int64_t*>(data)[k]; break;
    }
    if (t.is_float()) v.f[0] = dtype_is_float(dt) ? f : static_cast<double>(i);
    else v.i[0] = dtype_is_float(dt) ? static_cast<int64_t>(f) : i;
    return v;
  }

  void write(const std::string& name, int64_t k, double f, int64_t i) {
    auto& [data, dt, size] = buffer(name, k);
    write_raw(data, dt, k, f, i);
  }

  Buffers& buffers_;
  std::map<std::string, std::vector<Val>> vars_;
};

}  // namespace

void Interpreter::bind_buffer(const std::string& name, void* data, DType dtype, int64_t size) {
  buffers_[name] = {data, dtype, size};
}

void Interpreter::bind_scalar(const std::string& name, int64_t value) { scalars_[name] = value; }

void Interpreter::run(const Stmt& s) {
  Machine::Buffers b;
  for (const auto& [n, buf] : buffers_) b[n] = {buf.data, buf.dtype, buf.size};
  Machine m(b, scalars_);
  m.exec(s);
}

void Interpreter::run(const Kernel& k) {
  k.require_stage(Stage::Loops, "Interpreter::run");
  for (const auto& p : k.params) {
    if (p.role == ParamRole::Workspace) {
      Machine::Buffers none;
      Machine m(none, scalars_);
      const int64_t size = m.eval(p.size).as_int();
      owned_.emplace_back(static_cast<size_t>(std::max<int64_t>(size, 1) * dtype_size(p.dtype)), 0);
      bind_buffer(p.name, owned_.back().data(), p.dtype, size);
    } else if (p.kind == ParamKind::Scalar) {
      STRATA_ASSERT(scalars_.count(p.name), "kernel {}: scalar {} is not bound", k.name, p.name);
    } else {
      STRATA_ASSERT(buffers_.count(p.name), "kernel {}: buffer {} is not bound", k.name, p.name);
    }
  }
  run(k.preprocess);
  run(k.body);
}

}  // namespace strata::sc
