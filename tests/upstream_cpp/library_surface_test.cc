// C++ compiled against apache-tvm-ffi's published headers, linked against
// tether's libtether_core only, calling the C++ entry points TVM-FFI's
// headers declare and its library implements (StructuralEqual,
// StructuralHash, json::Parse/Stringify, ReprPrint, DeepCopy,
// ToJSONGraph/FromJSONGraph). Checks their results and that failures
// arrive as tvm::ffi::Error with TVM-FFI's kind and message. Prints
// "N passed, N failed".
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/dataclass.h>
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#include <tvm/ffi/extra/visit_error_context.h>
#include <tvm/ffi/reflection/access_path.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <string>

#include "check.h"

namespace ffi = tvm::ffi;

static void test_structural() {
  ffi::Array<ffi::Any> a{1, ffi::String("x"), 2.5};
  ffi::Array<ffi::Any> b{1, ffi::String("x"), 2.5};
  ffi::Array<ffi::Any> c{1, ffi::String("y"), 2.5};
  CHECK(!a.same_as(b));
  CHECK(ffi::StructuralEqual::Equal(a, b, false, false));
  CHECK(!ffi::StructuralEqual::Equal(a, c, false, false));
  CHECK(ffi::StructuralHash::Hash(a, false, false) == ffi::StructuralHash::Hash(b, false, false));
  CHECK(ffi::StructuralHash::Hash(a, false, false) != ffi::StructuralHash::Hash(c, false, false));
  // The functor forms go through the same entry points.
  CHECK(ffi::StructuralEqual()(a, b));
  CHECK(ffi::StructuralHash()(a) == ffi::StructuralHash::Hash(a, false, false));

  auto none = ffi::StructuralEqual::GetFirstMismatch(a, b, false, false);
  CHECK(!none.has_value());
  auto mismatch = ffi::StructuralEqual::GetFirstMismatch(a, c, false, false);
  CHECK(mismatch.has_value());
  if (mismatch.has_value()) {
    ffi::reflection::AccessPath lhs = mismatch.value().get<0>();
    ffi::reflection::AccessPath rhs = mismatch.value().get<1>();
    CHECK(lhs->depth == 1 && rhs->depth == 1);
    CHECK(lhs->step.value()->key.cast<int64_t>() == 1);
  }
}

static void test_json() {
  ffi::json::Value v = ffi::json::Parse(ffi::String("{\"a\": [1, 2.5, true, null, \"s\"]}"));
  ffi::String text = ffi::json::Stringify(v);
  CHECK(std::string(text) == "{\"a\":[1,2.5,true,null,\"s\"]}");
  ffi::String indented = ffi::json::Stringify(v, 2);
  CHECK(contains(std::string(indented), "\n  \"a\": [\n    1,"));
  // A syntax error: thrown as ValueError, or reported through error_msg.
  try {
    ffi::json::Parse(ffi::String("[1, 2"));
    CHECK(false);
  } catch (const ffi::Error& e) {
    CHECK(e.kind() == "ValueError");
    CHECK(contains(e.message(), "Expecting"));
    CHECK(contains(e.what(), "Expecting"));
  }
  ffi::String error_msg("unchanged");
  ffi::json::Value bad = ffi::json::Parse(ffi::String("[1, 2"), &error_msg);
  CHECK(bad == nullptr);
  CHECK(contains(std::string(error_msg), "Expecting"));
  ffi::json::Value good = ffi::json::Parse(ffi::String("[3]"), &error_msg);
  CHECK(std::string(error_msg).empty());
  CHECK(good.cast<ffi::Array<ffi::Any>>()[0].cast<int64_t>() == 3);
}

static void test_repr_and_copy() {
  ffi::Array<ffi::Any> a{1, ffi::String("x")};
  CHECK(std::string(ffi::ReprPrint(a)) == "(1, \"x\")");  // TVM-FFI prints an Array as a tuple
  CHECK(std::string(ffi::ReprPrint(ffi::Any(nullptr))) == "None");
  ffi::Any copy = ffi::DeepCopy(a);
  auto copied = copy.cast<ffi::Array<ffi::Any>>();
  CHECK(!copied.same_as(a));
  CHECK(ffi::StructuralEqual::Equal(copy, a, false, false));
}

static void test_json_graph() {
  ffi::Array<ffi::Any> inner{1, 2};
  ffi::Array<ffi::Any> outer{inner, inner, ffi::String("s")};
  ffi::json::Value graph = ffi::ToJSONGraph(outer);
  std::string text = ffi::json::Stringify(graph);
  CHECK(contains(text, "\"root_index\""));
  ffi::Any back = ffi::FromJSONGraph(graph);
  CHECK(ffi::StructuralEqual::Equal(back, outer, false, false));
  auto arr = back.cast<ffi::Array<ffi::Any>>();
  // Shared nodes stay shared.
  CHECK(arr[0].cast<ffi::ObjectRef>().same_as(arr[1].cast<ffi::ObjectRef>()));
  try {
    ffi::FromJSONGraph(ffi::json::Parse(ffi::String("[1]")));
    CHECK(false);
  } catch (const ffi::Error& e) {
    CHECK(e.kind() == "ValueError");
    CHECK(contains(e.message(), "Invalid JSON Object Graph"));
  }
}

static void test_recursive() {
  ffi::Array<ffi::Any> a{1, ffi::String("x"), 2.5};
  ffi::Array<ffi::Any> b{1, ffi::String("x"), 2.5};
  ffi::Array<ffi::Any> c{1, ffi::String("y")};
  CHECK(!a.same_as(b));
  CHECK(ffi::RecursiveEq(a, b));
  CHECK(!ffi::RecursiveEq(a, c));
  CHECK(ffi::RecursiveLt(a, c) && ffi::RecursiveLe(a, c) && ffi::RecursiveLe(a, b));
  CHECK(ffi::RecursiveGt(c, a) && ffi::RecursiveGe(c, a) && ffi::RecursiveGe(a, b));
  CHECK(!ffi::RecursiveGt(a, b) && !ffi::RecursiveLt(a, b));
  CHECK(ffi::RecursiveHash(a) == ffi::RecursiveHash(b));
  CHECK(ffi::RecursiveHash(a) != ffi::RecursiveHash(c));
  // TVM-FFI's value for None: StableHashCombine(0, 0).
  CHECK(ffi::RecursiveHash(ffi::Any(nullptr)) == 2654435769LL);
  // Different types are unequal, and cannot be ordered.
  CHECK(!ffi::RecursiveEq(ffi::Any(1), ffi::Any(ffi::String("1"))));
  try {
    ffi::RecursiveLt(ffi::Any(1), ffi::Any(ffi::String("1")));
    CHECK(false);
  } catch (const ffi::Error& e) {
    CHECK(e.kind() == "TypeError");
    CHECK(contains(e.message(), "Cannot compare values of different types"));
  }
}

static void test_visit_error_context() {
  namespace refl = ffi::reflection;
  refl::AccessPath inner = refl::AccessPath::Root()->Attr(ffi::String("a"));
  refl::AccessPath outer = inner->ArrayItem(3);
  // Innermost first: the visit was in `outer`, then in its parent `inner`.
  auto ctx = ffi::details::MakeVisitErrorContext(inner);
  ctx->reverse_visit_pattern.push_back(outer);
  ffi::Array<refl::AccessPath> found = ffi::VisitErrorContext::FindAccessPaths(outer, ctx, false);
  CHECK(found.size() == 1);
  if (found.size() == 1) {
    CHECK(found[0]->depth == 1);
    CHECK(found[0]->step.value()->key.cast<ffi::String>() == "parent");
  }
  // A pattern that does not start at the root matches nowhere.
  auto other = ffi::details::MakeVisitErrorContext(outer);
  other->reverse_visit_pattern.push_back(inner);
  CHECK(ffi::VisitErrorContext::FindAccessPaths(outer, other, false).size() == 0);
}

int main() {
  test_recursive();
  test_visit_error_context();
  test_structural();
  test_json();
  test_repr_and_copy();
  test_json_graph();
  return report("");
}
