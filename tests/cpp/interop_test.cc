// Objects and values shared in one process between code built with
// tether's headers (this file) and a library built with apache-tvm-ffi's
// headers (tests/cpp/interop/upstream_side.cc, linked here), both on
// libtether_core: the same type under one key, objects made on one side
// read, held and released on the other, containers, callbacks and errors.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <tether/tether.h>

using namespace tether;

namespace {

int g_destroyed = 0;

// The same key and layout as upstream_side's SharedObj.
class SharedObj : public Object {
 public:
  int64_t value = 0;
  String name;
  SharedObj(int64_t v, String n) : value(v), name(std::move(n)) {}
  ~SharedObj() { ++g_destroyed; }
  TETHER_DECLARE_OBJECT_INFO_FINAL("interop.Shared", SharedObj, Object);
};

class Shared : public ObjectRef {
 public:
  TETHER_DEFINE_OBJECT_REF_METHODS(Shared, ObjectRef, SharedObj);
};

Function Up(const char* name) { return Function::GetGlobalRequired(name); }

}  // namespace

TEST_CASE("both sides register one type under one key") {
  CHECK(Up("interop.up_type_index")().cast<int64_t>() == SharedObj::RuntimeTypeIndex());
}

TEST_CASE("an object made by upstream code is a tether Shared") {
  Shared s = Up("interop.up_make")(41, std::string(30, 'u')).cast<Shared>();
  CHECK(s->value == 41);
  CHECK(s->name.size() == 30);
  CHECK(s.use_count() == 1);
  Array<Shared> pair = Up("interop.up_pair")(s).cast<Array<Shared>>();
  CHECK(pair[1].same_as(s));
  CHECK(s.use_count() == 3);
}

TEST_CASE("an object made by tether code is read, held and released by upstream code") {
  g_destroyed = 0;
  {
    Shared s(make_object<SharedObj>(7, "tether"));
    CHECK(Up("interop.up_value")(s).cast<int64_t>() == 7);
    CHECK(Up("interop.up_name")(s).cast<String>() == "tether");
    Any pair = Up("interop.up_pair")(s);
    CHECK(s.use_count() == 3);
    s = Shared();
    CHECK(g_destroyed == 0);  // upstream's Array still holds it
    pair = Any();             // upstream's Array releases it: tether's deleter runs
    CHECK(g_destroyed == 1);
  }
}

TEST_CASE("containers built by tether are read by upstream's inline code") {
  Map<String, int64_t> m{{"a", 1}, {"b", 2}};
  CHECK(Up("interop.up_map_get")(m, "b").cast<int64_t>() == 2);
}

TEST_CASE("callbacks and errors cross in both directions") {
  Function twice = Function::FromTyped([](int64_t x) { return 2 * x; });
  CHECK(Up("interop.up_call_plus_one")(twice, 20).cast<int64_t>() == 41);
  CHECK_THROWS_WITH_AS(Up("interop.up_throw")(), "ValueError: thrown by upstream code", Error);
  Function fails = Function::FromTyped([]() -> int { throw Error("KeyError", "thrown by tether code"); });
  CHECK(Up("interop.up_catch")(fails).cast<std::string>() == "KeyError: thrown by tether code");
}
