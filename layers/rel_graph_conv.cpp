#include "layers/rel_graph_conv.h"

#include <cstring>

#include "core/autograd_ops.h"

namespace strata::nn {
namespace {

// R independent Glorot draws of [a, b], stacked as [R, a·b].
Tensor glorot_stack(int64_t R, int64_t a, int64_t b, Rng& rng) {
  Tensor t = Tensor::empty({R, a * b}, DType::F32);
  for (int64_t r = 0; r < R; ++r) {
    const Tensor g = glorot_uniform(a, b, rng);
    std::memcpy(t.data<float>() + r * a * b, g.data<float>(), sizeof(float) * a * b);
  }
  return t;
}

}  // namespace

RelGraphConv::RelGraphConv(const RelGraphConvOptions& o, Rng& rng, int index) : o_(o) {
  STRATA_CHECK(o.in >= 1 && o.out >= 1 && o.relations >= 1, "RelGraphConv: sizes in={} out={} relations={}", o.in,
               o.out, o.relations);
  STRATA_CHECK(o.num_bases >= 0, "RelGraphConv: num_bases must be >= 0, got {}", o.num_bases);
  const std::string prefix = fmt::format("layers.{}.", index);
  auto add = [&](ag::Var& v, Tensor t, const std::string& name, bool is_bias) {
    v = ag::Var::parameter(std::move(t), prefix + name);
    params_.push_back({v.name(), v, index, is_bias, nullptr});
  };
  if (o.num_bases == 0) {
    add(weight_, glorot_stack(o.relations, o.in, o.out, rng), "weight", false);
  } else {
    add(basis_, glorot_stack(o.num_bases, o.in, o.out, rng), "basis", false);
    add(coeff_, glorot_uniform(o.relations, o.num_bases, rng), "coeff", false);
  }
  if (o.self_loop) add(weight_self_, glorot_uniform(o.in, o.out, rng), "weight_self", false);
  if (o.bias) add(bias_, Tensor::zeros({o.out}, DType::F32), "bias", true);
}

void RelGraphConv::request_kernels(RelationalKernelRequests& r) const {
  if (o_.one_hot && o_.num_bases > 0)
    r.add_basis_embed(o_.num_bases, o_.out);
  else if (o_.one_hot)
    r.add_embed(o_.out);
  else
    r.add_matmul(o_.in, o_.out);
}

ag::Var RelGraphConv::relation_weights(ag::Tape& tape) const {
  return weight_.defined() ? weight_ : ag::matmul(tape, coeff_, basis_);
}

ag::Var RelGraphConv::forward(ag::Tape& tape, const RelationalKernels& k, const ag::Var& x,
                              uint64_t dropout_seed) const {
  return propagate(tape, k, x, nullptr, dropout_seed);
}

ag::Var RelGraphConv::forward_on(ag::Tape& tape, const RelationalKernels& k, const ag::Var& x,
                                 const std::vector<int64_t>& nodes, uint64_t dropout_seed) const {
  STRATA_ASSERT(!tape.grad_enabled(), "{}: a forward over part of the graph is for inference (gradients off)",
                describe());
  // One-hot input: the subgraph's columns are the whole graph's ids (the weight rows read).
  const int64_t cols = o_.one_hot ? o_.in : static_cast<int64_t>(nodes.size());
  STRATA_ASSERT(k.graph().rows == static_cast<int64_t>(nodes.size()) && k.graph().cols == cols,
                "{}: a {} x {} subgraph for {} nodes", describe(), k.graph().rows, k.graph().cols, nodes.size());
  return propagate(tape, k, x, &nodes, dropout_seed);
}

ag::Var RelGraphConv::propagate(ag::Tape& tape, const RelationalKernels& k, const ag::Var& x,
                                const std::vector<int64_t>* nodes, uint64_t dropout_seed) const {
  ag::Var h;
  if (o_.one_hot) {
    STRATA_ASSERT(k.graph().cols == o_.in, "{} on a graph of {} nodes", describe(), k.graph().cols);
    // With bases the per-relation weights are never formed: R x N x out of them,
    // where the relations read far fewer rows (MUTAG: 46 x 23,644 rows).
    h = weight_.defined() ? relational_embed(tape, k, weight_, o_.out)
                          : relational_basis_embed(tape, k, coeff_, basis_, o_.out);
    if (weight_self_.defined()) {
      // Over a subgraph, node i's self-loop row is row nodes[i] of W_self.
      STRATA_ASSERT(k.graph().rows == (nodes ? static_cast<int64_t>(nodes->size()) : o_.in),
                    "{}: a one-hot self loop needs a square graph", describe());
      h = ag::add(tape, h, nodes ? ag::Var::constant(weight_self_.value().gather_rows(*nodes)) : weight_self_);
    }
  } else {
    STRATA_ASSERT(x.defined() && x.dim(1) == o_.in, "{} applied to {} features", describe(), x.defined() ? x.dim(1) : 0);
    h = relational_matmul(tape, k, x, relation_weights(tape), o_.out);
    if (weight_self_.defined()) h = ag::add(tape, h, ag::matmul(tape, x, weight_self_));
  }
  if (bias_.defined()) h = ag::bias_add(tape, h, bias_);
  if (o_.activation == RelActivation::Relu) h = ag::relu(tape, h);
  if (o_.dropout > 0.0f) h = ag::dropout(tape, h, o_.dropout, dropout_seed);
  return h;
}

std::string RelGraphConv::describe() const {
  return fmt::format("RelGraphConv({}{} -> {}, {} relations, {}{}{}{}{})", o_.one_hot ? "one-hot " : "", o_.in, o_.out,
                     o_.relations, o_.num_bases > 0 ? fmt::format("{} bases", o_.num_bases) : std::string("full weights"),
                     o_.self_loop ? ", self loop" : "", o_.bias ? ", bias" : "",
                     o_.activation == RelActivation::Relu ? ", relu" : "",
                     o_.dropout > 0 ? fmt::format(", dropout {:g}", o_.dropout) : std::string());
}

}  // namespace strata::nn
