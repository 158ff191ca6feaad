#include "sparse_compiler/passes/linear_form.h"

#include "sparse_compiler/ir/equality.h"

namespace strata::sc {

void LinearForm::add_term(const Expr& t, int64_t c) {
  if (c == 0) return;
  for (auto& [e, k] : terms) {
    if (structural_equal(e, t)) {
      k += c;
      return;
    }
  }
  terms.emplace_back(t, c);
}

void LinearForm::add(const LinearForm& o, int64_t scale) {
  for (const auto& [e, k] : o.terms) add_term(e, k * scale);
  constant += o.constant * scale;
}

int64_t LinearForm::coefficient_of_var(const std::string& name) const {
  for (const auto& [e, k] : terms)
    if (const auto* v = e.as<VarNode>(); v && v->name == name) return k;
  return 0;
}

LinearForm LinearForm::without_var(const std::string& name) const {
  LinearForm f;
  f.constant = constant;
  for (const auto& [e, k] : terms) {
    const auto* v = e.as<VarNode>();
    if (!(v && v->name == name)) f.terms.emplace_back(e, k);
  }
  return f;
}

bool same_linear_form(const LinearForm& a, const LinearForm& b) {
  if (a.constant != b.constant || a.terms.size() != b.terms.size()) return false;
  for (const auto& [e, k] : a.terms) {
    bool found = false;
    for (const auto& [f, q] : b.terms) found |= q == k && structural_equal(e, f);
    if (!found) return false;
  }
  return true;
}

LinearForm to_linear(const Expr& e) {
  LinearForm L;
  if (const int64_t* c = as_const_int(e); c && e.type().is_int()) {
    L.constant = *c;
  } else if (const auto* a = e.as<AddNode>()) {
    L.add(to_linear(a->a), 1);
    L.add(to_linear(a->b), 1);
  } else if (const auto* s = e.as<SubNode>()) {
    L.add(to_linear(s->a), 1);
    L.add(to_linear(s->b), -1);
  } else if (const auto* m = e.as<MulNode>()) {
    if (const int64_t* c = as_const_int(m->b)) {
      L.add(to_linear(m->a), *c);
    } else if (const int64_t* c2 = as_const_int(m->a)) {
      L.add(to_linear(m->b), *c2);
    } else {
      L.add_term(e, 1);
    }
  } else {
    L.add_term(e, 1);
  }
  return L;
}

Expr from_linear(const LinearForm& L, Type t) {
  Expr out;
  auto term = [&](const Expr& e, int64_t k) { return k == 1 ? e : mul(e, make_int(k, t)); };
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [e, k] : L.terms) {
      if (k == 0 || (pass == 0) != (k > 0)) continue;
      if (!out.defined()) {
        out = k > 0 ? term(e, k) : mul(e, make_int(k, t));
      } else {
        out = k > 0 ? add(out, term(e, k)) : sub(out, term(e, -k));
      }
    }
  }
  if (!out.defined()) return make_int(L.constant, t);
  if (L.constant > 0) return add(out, make_int(L.constant, t));
  if (L.constant < 0) return sub(out, make_int(-L.constant, t));
  return out;
}

}  // namespace strata::sc
