// Expression nodes and their validating factories.
//
// Build expressions with the factories (make_int, var, add, load, ...) or the
// operators below; never construct nodes directly. Factories check operand types
// and fold the trivial cases a reader would not want to see in printed IR (x + 0,
// x * 1), but leave real simplification to passes/simplify.
//
// Integer and float immediates adopt the type of the other operand, so
// `load(Y, i) + 1.0` is float32 when Y is float32 and `i * 64` stays int64.
#pragma once

#include <string>
#include <vector>

#include "sparse_compiler/ir/axis.h"
#include "sparse_compiler/ir/node.h"

namespace strata::sc {

template <NodeKind K>
struct ExprNodeBase : ExprNode {
  static constexpr NodeKind kind_value = K;
  explicit ExprNodeBase(Type t) : ExprNode(K, t) {}
};

struct IntImmNode : ExprNodeBase<NodeKind::IntImm> {
  IntImmNode(Type t, int64_t v) : ExprNodeBase(t), value(v) {}
  const int64_t value;
};

struct FloatImmNode : ExprNodeBase<NodeKind::FloatImm> {
  FloatImmNode(Type t, double v) : ExprNodeBase(t), value(v) {}
  const double value;
};

// A named scalar: a loop variable, a let-bound value, or a scalar kernel parameter.
// Names are unique within a kernel; passes that introduce variables make fresh names.
struct VarNode : ExprNodeBase<NodeKind::Var> {
  VarNode(Type t, std::string n) : ExprNodeBase(t), name(std::move(n)) {}
  const std::string name;
};

struct CastNode : ExprNodeBase<NodeKind::Cast> {
  CastNode(Type t, Expr v) : ExprNodeBase(t), value(std::move(v)) {}
  const Expr value;
};

template <NodeKind K>
struct BinaryNode : ExprNodeBase<K> {
  BinaryNode(Type t, Expr x, Expr y) : ExprNodeBase<K>(t), a(std::move(x)), b(std::move(y)) {}
  const Expr a, b;
};
struct AddNode : BinaryNode<NodeKind::Add> { using BinaryNode::BinaryNode; };
struct SubNode : BinaryNode<NodeKind::Sub> { using BinaryNode::BinaryNode; };
struct MulNode : BinaryNode<NodeKind::Mul> { using BinaryNode::BinaryNode; };
// Integer division and modulo round toward negative infinity (floor), as in Halide,
// so index arithmetic on negative offsets stays regular; float Div is ordinary.
struct DivNode : BinaryNode<NodeKind::Div> { using BinaryNode::BinaryNode; };
struct ModNode : BinaryNode<NodeKind::Mod> { using BinaryNode::BinaryNode; };
struct MinNode : BinaryNode<NodeKind::Min> { using BinaryNode::BinaryNode; };
struct MaxNode : BinaryNode<NodeKind::Max> { using BinaryNode::BinaryNode; };
struct EQNode : BinaryNode<NodeKind::EQ> { using BinaryNode::BinaryNode; };
struct NENode : BinaryNode<NodeKind::NE> { using BinaryNode::BinaryNode; };
struct LTNode : BinaryNode<NodeKind::LT> { using BinaryNode::BinaryNode; };
struct LENode : BinaryNode<NodeKind::LE> { using BinaryNode::BinaryNode; };
struct AndNode : BinaryNode<NodeKind::And> { using BinaryNode::BinaryNode; };
struct OrNode : BinaryNode<NodeKind::Or> { using BinaryNode::BinaryNode; };

struct NotNode : ExprNodeBase<NodeKind::Not> {
  NotNode(Type t, Expr v) : ExprNodeBase(t), a(std::move(v)) {}
  const Expr a;
};

struct SelectNode : ExprNodeBase<NodeKind::Select> {
  SelectNode(Type t, Expr c, Expr x, Expr y)
      : ExprNodeBase(t), condition(std::move(c)), true_value(std::move(x)), false_value(std::move(y)) {}
  const Expr condition, true_value, false_value;
};

// buffer[index] of a flat buffer (a kernel parameter or a local allocation).
// A vector index (a Ramp) loads a vector.
struct LoadNode : ExprNodeBase<NodeKind::Load> {
  LoadNode(Type t, std::string b, Expr i) : ExprNodeBase(t), buffer(std::move(b)), index(std::move(i)) {}
  const std::string buffer;
  const Expr index;
};

// buffer[i0, i1, ...] of a sparse buffer: coordinates at stage I, positions at
// stage II. Flattened to Load by lower_sparse_buffer.
struct SparseLoadNode : ExprNodeBase<NodeKind::SparseLoad> {
  SparseLoadNode(Type t, SparseBuffer b, std::vector<Expr> i)
      : ExprNodeBase(t), buffer(std::move(b)), indices(std::move(i)) {}
  const SparseBuffer buffer;
  const std::vector<Expr> indices;
};

// base, base + stride, ..., base + (lanes-1) * stride.
struct RampNode : ExprNodeBase<NodeKind::Ramp> {
  RampNode(Type t, Expr b, Expr s, int l) : ExprNodeBase(t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  const Expr base, stride;
  const int lanes;
};

struct BroadcastNode : ExprNodeBase<NodeKind::Broadcast> {
  BroadcastNode(Type t, Expr v, int l) : ExprNodeBase(t), value(std::move(v)), lanes(l) {}
  const Expr value;
  const int lanes;
};

// A pure intrinsic. Math: exp, log, sqrt, abs (one argument each). Search:
// upper_bound(buffers = {array}, args = {lo, hi, value}) is the first position p in
// [lo, hi) with array[p] > value (hi if none); lower_bound likewise with >=; find
// is the position of value in [lo, hi), or -1. The arrays are sorted.
// GPU intrinsics (run serially by the interpreter and the C++ emitter):
// warp_reduce_add(buffers = {lanes}, args = {width}) is lanes[0] + ... +
// lanes[width-1], where `lanes` holds one value per thread of a loop bound to
// threadIdx.x (CUDA: a shuffle reduction across those threads);
// sync_threads() is a barrier among the threads of a block, used as a statement
// (see sync_threads() in stmt.h).
// CPU intrinsic: lane_sums(args = {v_0, ..., v_{W-1}}), W vectors of W lanes, is the
// vector whose lane k is the sum of v_k's lanes (a transposing reduction: W
// horizontal sums for about the shuffles of two; Schedule::transpose_sums).
struct CallNode : ExprNodeBase<NodeKind::Call> {
  CallNode(Type t, std::string n, std::vector<Expr> a, std::vector<std::string> bufs)
      : ExprNodeBase(t), name(std::move(n)), args(std::move(a)), buffers(std::move(bufs)) {}
  const std::string name;
  const std::vector<Expr> args;
  const std::vector<std::string> buffers;
};

enum class ReduceOp : uint8_t { Add, Max };
// Reduces the lanes of a vector to a scalar.
struct VectorReduceNode : ExprNodeBase<NodeKind::VectorReduce> {
  VectorReduceNode(Type t, ReduceOp o, Expr v) : ExprNodeBase(t), op(o), value(std::move(v)) {}
  const ReduceOp op;
  const Expr value;
};

// ---- factories ----------------------------------------------------------------

Expr make_int(int64_t v, Type t = Type::i64());
Expr make_float(double v, Type t = Type::f32());
Expr make_zero(Type t);
Expr make_one(Type t);
Expr make_bool(bool v);
Expr var(const std::string& name, Type t = Type::i64());
Expr cast(Type t, Expr v);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
// Floats: min(a, b) = a < b ? a : b and max(a, b) = a > b ? a : b in every backend
// (the emitters and the interpreter alike; x86's minps / maxps): b when either is
// NaN or the two compare equal (-0 and +0). A NaN that must propagate needs a select.
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);  // built as lt(b, a)
Expr ge(Expr a, Expr b);  // built as le(b, a)
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
Expr select(Expr c, Expr t, Expr f);
Expr load(Type elem, const std::string& buffer, Expr index);
Expr sparse_load(const SparseBuffer& b, std::vector<Expr> indices);
Expr ramp(Expr base, Expr stride, int lanes);
Expr broadcast(Expr v, int lanes);
Expr call(Type t, const std::string& name, std::vector<Expr> args, std::vector<std::string> buffers = {});
Expr vector_reduce(ReduceOp op, Expr v);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr abs(Expr x);
Expr upper_bound(const std::string& array, Expr lo, Expr hi, Expr value);
Expr warp_reduce_add(Type t, const std::string& lanes, int64_t width);
Expr lane_sums(std::vector<Expr> vectors);

// Intrinsic names shared by the passes, the interpreter and the emitters.
inline constexpr const char* kWarpReduceAdd = "warp_reduce_add";
inline constexpr const char* kLaneSums = "lane_sums";
inline constexpr const char* kSyncThreads = "sync_threads";
// True for intrinsics evaluated for their effect (barriers), which passes must keep.
bool call_has_side_effects(const std::string& name);

// Immediate value of e if it is an IntImm.
const int64_t* as_const_int(const Expr& e);
const double* as_const_float(const Expr& e);
bool is_const(const Expr& e, int64_t v);
bool is_zero(const Expr& e);
bool is_one(const Expr& e);

inline Expr operator+(Expr a, Expr b) { return add(std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return sub(std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return mul(std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return div(std::move(a), std::move(b)); }
inline Expr operator%(Expr a, Expr b) { return mod(std::move(a), std::move(b)); }
inline Expr operator<(Expr a, Expr b) { return lt(std::move(a), std::move(b)); }
inline Expr operator<=(Expr a, Expr b) { return le(std::move(a), std::move(b)); }
inline Expr operator>(Expr a, Expr b) { return gt(std::move(a), std::move(b)); }
inline Expr operator>=(Expr a, Expr b) { return ge(std::move(a), std::move(b)); }

}  // namespace strata::sc
