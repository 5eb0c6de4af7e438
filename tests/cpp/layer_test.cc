// Unit tests of tether's header-only C++ layer (doctest), linked only to
// libtether_core: objects and counts, make_object's allocation through the
// registry (a counting allocator installed from C++, and exception
// safety), Any casts and their messages, functions and errors across the
// boundary, strings, containers, tensors and reflection.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <tether/tether.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tether;

// ---- a counting allocator installed from C++ --------------------------------

namespace {

std::atomic<int> g_allocs{0};
std::atomic<int> g_frees{0};

// Block: [start ... body - 8: delete_space | body], body at start + 64 so any
// alignment up to 64 holds.
char* AlignedBlock(size_t size) {
#if defined(_WIN32)
  return static_cast<char*>(_aligned_malloc(size, 64));
#else
  return static_cast<char*>(std::aligned_alloc(64, size));
#endif
}

void FreeBlock(char* start) {
#if defined(_WIN32)
  _aligned_free(start);
#else
  std::free(start);
#endif
}

void CountingDeleteSpace(void* body) {
  g_frees.fetch_add(1);
  FreeBlock(static_cast<char*>(body) - 64);
}

void* CountingAllocate(size_t size, size_t alignment, int32_t, void*) {
  if (alignment > 64) return nullptr;
  char* start = AlignedBlock((size + 64 + 63) / 64 * 64);
  if (start == nullptr) return nullptr;
  char* body = start + 64;
  reinterpret_cast<TVMFFIObjectAllocHeader*>(body)[-1].delete_space = &CountingDeleteSpace;
  g_allocs.fetch_add(1);
  return body;
}

TVMFFICustomAllocator g_counting{&CountingAllocate, nullptr};

/* Installs the counting allocator for a scope (then the builtin again). */
struct CountingScope {
  CountingScope() {
    g_allocs = 0;
    g_frees = 0;
    REQUIRE(TVMFFISetCustomAllocator(&g_counting) == 0);
  }
  ~CountingScope() { TVMFFISetCustomAllocator(nullptr); }
};

// ---- test types ---------------------------------------------------------------

int g_destroyed = 0;

class NodeObj : public Object {
 public:
  int64_t value;
  String name;
  explicit NodeObj(int64_t v = 0, String n = "node") : value(v), name(std::move(n)) {}
  ~NodeObj() { ++g_destroyed; }
  int64_t Twice() const { return value * 2; }
  void Add(int64_t d) { value += d; }
  TETHER_DECLARE_OBJECT_INFO("cpptest.Node", NodeObj, Object);
};

class Node : public ObjectRef {
 public:
  TETHER_DEFINE_OBJECT_REF_METHODS(Node, ObjectRef, NodeObj);
};

class LeafObj : public NodeObj {
 public:
  Node child;
  TETHER_DECLARE_OBJECT_INFO_FINAL("cpptest.Leaf", LeafObj, NodeObj);
};

class ThrowingObj : public Object {
 public:
  std::vector<int> payload;
  explicit ThrowingObj(bool fail) : payload(100, 7) {
    if (fail) throw std::runtime_error("constructor failed");
  }
  TETHER_DECLARE_OBJECT_INFO("cpptest.Throwing", ThrowingObj, Object);
};

class VecObj : public Object {
 public:
  size_t n;
  explicit VecObj(size_t count) : n(count) {
    for (size_t i = 0; i < n; ++i) new (&items()[i]) double(static_cast<double>(i) * 1.5);
  }
  double* items() { return reinterpret_cast<double*>(this + 1); }
  TETHER_DECLARE_OBJECT_INFO_FINAL("cpptest.Vec", VecObj, Object);
};

TETHER_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<NodeObj>()
      .def_ro("value", &NodeObj::value, "the value")
      .def_rw("name", &NodeObj::name, "a label")
      .def("twice", &NodeObj::Twice)
      .def("add", &NodeObj::Add)
      .def(reflection::init<NodeObj, int64_t, String>())
      .attr("cpptest.kind", Any(String("node")));
  reflection::GlobalDef().def("cpptest.add", [](int64_t a, int64_t b) { return a + b; });
}

}  // namespace

// ---- objects ------------------------------------------------------------------

TEST_CASE("make_object allocates through the registry with the marker and counts both ways") {
  g_destroyed = 0;
  ObjectPtr<NodeObj> p = make_object<NodeObj>(5);
  CHECK(IsRegistryAllocated(p.get()));
  CHECK(p->type_index() == NodeObj::RuntimeTypeIndex());
  CHECK(p->GetTypeKey() == "cpptest.Node");
  CHECK(p.use_count() == 1);
  CHECK(p->weak_count() == 1);
  {
    ObjectPtr<NodeObj> q = p;
    CHECK(p.use_count() == 2);
    ObjectPtr<Object> base = q;
    CHECK(base.use_count() == 3);
  }
  CHECK(p.use_count() == 1);
  WeakObjectPtr<NodeObj> w(p);
  CHECK(p->weak_count() == 2);
  CHECK(w.lock().get() == p.get());
  p.reset();
  CHECK(g_destroyed == 1);  // strong to zero destroyed the contents...
  CHECK(w.expired());       // ...while the weak reference keeps the block
  CHECK(w.lock() == nullptr);
  w.reset();
}

TEST_CASE("IsInstance follows the registered hierarchy") {
  ObjectPtr<LeafObj> leaf = make_object<LeafObj>();
  const Object* o = leaf.get();
  CHECK(o->IsInstance<Object>());
  CHECK(o->IsInstance<NodeObj>());
  CHECK(o->IsInstance<LeafObj>());
  CHECK_FALSE(make_object<NodeObj>()->IsInstance<LeafObj>());
  CHECK_FALSE(o->IsInstance<ThrowingObj>());
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(LeafObj::RuntimeTypeIndex());
  REQUIRE(info != nullptr);
  CHECK(info->type_depth == 2);
  CHECK(info->type_ancestors[1]->type_index == NodeObj::RuntimeTypeIndex());
}

TEST_CASE("a counting allocator installed from C++ sees every make_object and every release") {
  g_destroyed = 0;
  {
    CountingScope scope;
    {
      ObjectPtr<NodeObj> a = make_object<NodeObj>(1);
      ObjectPtr<NodeObj> b = make_object<NodeObj>(2);
      CHECK(g_allocs.load() == 2);
      CHECK(g_frees.load() == 0);
      WeakObjectPtr<NodeObj> w(a);
      a.reset();
      CHECK(g_frees.load() == 0);  // the weak reference holds the block
      w.reset();
      CHECK(g_frees.load() == 1);
    }
    CHECK(g_frees.load() == 2);
    CHECK(g_destroyed == 2);
  }
}

TEST_CASE("make_object returns the block when the constructor throws") {
  CountingScope scope;
  CHECK_THROWS_WITH_AS(make_object<ThrowingObj>(true), "constructor failed", std::runtime_error);
  CHECK(g_allocs.load() == 1);
  CHECK(g_frees.load() == 1);
  ObjectPtr<ThrowingObj> ok = make_object<ThrowingObj>(false);
  CHECK(ok->payload.size() == 100);
  ok.reset();
  CHECK(g_allocs.load() == 2);
  CHECK(g_frees.load() == 2);
}

TEST_CASE("an allocator that refuses makes make_object throw bad_alloc") {
  static TVMFFICustomAllocator refusing{[](size_t, size_t, int32_t, void*) -> void* { return nullptr; }, nullptr};
  REQUIRE(TVMFFISetCustomAllocator(&refusing) == 0);
  CHECK_THROWS_AS(make_object<NodeObj>(), std::bad_alloc);
  TVMFFISetCustomAllocator(nullptr);
}

TEST_CASE("make_inplace_array_object keeps the elements in the object's block") {
  CountingScope scope;
  {
    ObjectPtr<VecObj> v = make_inplace_array_object<VecObj, double>(10, 10);
    CHECK(v->n == 10);
    CHECK(v->items()[9] == doctest::Approx(13.5));
    CHECK(g_allocs.load() == 1);
  }
  CHECK(g_frees.load() == 1);
}

TEST_CASE("the core's DecRef and the inline one agree on C++ objects") {
  g_destroyed = 0;
  ObjectPtr<NodeObj> p = make_object<NodeObj>(3);
  TVMFFIObjectIncRef(detail::Header(p.get()));
  CHECK(p.use_count() == 2);
  TVMFFIObjectDecRef(detail::Header(p.get()));
  CHECK(p.use_count() == 1);
  NodeObj* raw = p.release();
  TVMFFIObjectDecRef(detail::Header(raw));  // the core runs our deleter
  CHECK(g_destroyed == 1);
}

// ---- Any ----------------------------------------------------------------------

TEST_CASE("Any converts the plain types as TVM-FFI does") {
  CHECK(Any(3).cast<int64_t>() == 3);
  CHECK(Any(true).cast<int>() == 1);
  CHECK(Any(2).cast<double>() == 2.0);
  CHECK(Any(1.5).cast<double>() == 1.5);
  CHECK(Any(1).cast<bool>());
  CHECK(Any().is_none());
  CHECK(Any("hi").cast<std::string>() == "hi");
  CHECK(Any(std::string(100, 'x')).cast<String>().size() == 100);
  CHECK(Any(std::string(100, 'x')).type_index() == kTVMFFIStr);
  CHECK(Any("short").type_index() == kTVMFFISmallStr);
  CHECK_FALSE(Any(1.5).try_cast<int64_t>().has_value());
}

TEST_CASE("failed casts say what was held and what was wanted") {
  CHECK_THROWS_WITH_AS(Any(1.5).cast<int64_t>(), "TypeError: Cannot convert from type `float` to `int`", Error);
  CHECK_THROWS_WITH_AS(Any("s").cast<Node>(), "TypeError: Cannot convert from type `str` to `cpptest.Node`", Error);
  Node n(make_object<NodeObj>());
  CHECK_THROWS_WITH_AS(Any(n).cast<Array<int>>(), "TypeError: Cannot convert from type `cpptest.Node` to `Array<int>`",
                       Error);
  CHECK_THROWS_WITH_AS(Any().cast<Node>(), "TypeError: Cannot convert from type `None` to `cpptest.Node`", Error);
}

TEST_CASE("object references round-trip through Any with their counts") {
  Node n(make_object<NodeObj>(9));
  {
    Any a(n);
    CHECK(n.use_count() == 2);
    Node back = a.cast<Node>();
    CHECK(back.same_as(n));
    CHECK(back->value == 9);
    CHECK(a.cast<ObjectRef>().same_as(n));
    CHECK(a.cast<ObjectPtr<NodeObj>>().get() == n.get());
  }
  CHECK(n.use_count() == 1);
  Node leaf(make_object<LeafObj>());
  CHECK(Any(leaf).try_cast<Node>().has_value());  // a subtype converts to its parent
  CHECK(Any().cast<ObjectRef>().defined() == false);
}

// ---- functions and errors --------------------------------------------------------

TEST_CASE("typed functions convert arguments and results") {
  Function add = Function::FromTyped([](int64_t a, double b) { return a + b; }, "add");
  CHECK(add(1, 2.5).cast<double>() == 3.5);
  TypedFunction<String(String, int)> rep([](String s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s.str();
    return String(out);
  });
  CHECK(rep("ab", 3) == "ababab");
}

TEST_CASE("argument mismatches are TypeErrors naming the signature") {
  Function add = Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "add");
  CHECK_THROWS_WITH_AS(add(1, "x"),
                       "TypeError: Mismatched type on argument #1 when calling: `add(0: int, 1: int) -> int`. "
                       "Expected `int` but got `str`",
                       Error);
  CHECK_THROWS_WITH_AS(add(1),
                       "TypeError: Mismatched number of arguments when calling: `add(0: int, 1: int) -> int`. "
                       "Expected 2 but got 1 arguments",
                       Error);
}

TEST_CASE("an exception thrown in C++ crosses the ABI as the same error object") {
  Error original("ValueError", "bad value");
  Function f = Function::FromTyped([original](int) -> int { throw original; });
  try {
    f(1);
    FAIL("no exception");
  } catch (const Error& e) {
    CHECK(e.kind() == "ValueError");
    CHECK(e.message() == "bad value");
    CHECK(e.same_as(original));
  }
  Function g = Function::FromTyped([]() -> int { throw std::out_of_range("oops"); });
  CHECK_THROWS_WITH_AS(g(), "RuntimeError: oops", Error);
  // Called through the C ABI directly: a nonzero return and the raised error.
  TVMFFIAny result = TVMFFIAny();
  CHECK(TVMFFIFunctionCall(detail::Header(g.get()), nullptr, 0, &result) != 0);
  TVMFFIObjectHandle raised = nullptr;
  TVMFFIErrorMoveFromRaised(&raised);
  REQUIRE(raised != nullptr);
  Error e(detail::UnsafeInit{}, ObjectPtr<Object>::Adopt(static_cast<Object*>(raised)));
  CHECK(e.kind() == "RuntimeError");
}

TEST_CASE("global functions: registration at static initialisation, lookup, override") {
  CHECK(Function::GetGlobalRequired("cpptest.add")(40, 2).cast<int>() == 42);
  CHECK_FALSE(Function::GetGlobal("cpptest.no_such_function").has_value());
  CHECK_THROWS_WITH_AS(Function::GetGlobalRequired("cpptest.no_such_function"),
                       "ValueError: Function cpptest.no_such_function not found", Error);
  CHECK_THROWS_AS(reflection::GlobalDef().def("cpptest.add", []() { return 0; }), Error);
  reflection::GlobalDef().def("cpptest.add2", [](int a) { return a + 2; });
  CHECK(Function::GetGlobalRequired("cpptest.add2")(1).cast<int>() == 3);
  // So are the testing library's (linked beside the core).
  CHECK(Function::GetGlobalRequired("testing.echo")(7).cast<int>() == 7);
}

TEST_CASE("a C++ function calls back into a function passed to it") {
  Function apply = Function::FromTyped([](Function f, int64_t x) { return f(x).cast<int64_t>() * 10; });
  Function inc = Function::FromTyped([](int64_t x) { return x + 1; });
  CHECK(apply(inc, 4).cast<int64_t>() == 50);
  TypedFunction<int64_t(TypedFunction<int64_t(int64_t)>, int64_t)> apply_typed(
      [](TypedFunction<int64_t(int64_t)> f, int64_t x) { return f(x) * 10; });
  CHECK(apply_typed(TypedFunction<int64_t(int64_t)>(inc), 1) == 20);
}

// ---- strings and containers -----------------------------------------------------

TEST_CASE("String and Bytes, small and large") {
  String a("abc"), b(std::string(50, 'z'));
  CHECK(a.size() == 3);
  CHECK(std::string(a.c_str()) == "abc");
  CHECK(b.size() == 50);
  CHECK(b.c_str()[50] == '\0');
  String c = b;
  CHECK(c == b);
  Bytes raw(std::string("\0\1\2", 3));
  CHECK(raw.size() == 3);
  CHECK(Any(raw).cast<Bytes>() == raw);
  CHECK_FALSE(Any(raw).try_cast<String>().has_value());
}

TEST_CASE("Array is read inline and checked on cast") {
  Array<int64_t> a{1, 2, 3};
  CHECK(a.size() == 3);
  CHECK(a[2] == 3);
  CHECK(a.at(-0) == 1);
  CHECK_THROWS_WITH_AS(a.at(3), "IndexError: Index 3 out of bounds 3", Error);
  Any held(a);
  CHECK(held.type_index() == kTVMFFIArray);
  CHECK(held.cast<Array<int64_t>>().same_as(a));
  CHECK(held.cast<Array<double>>()[0] == 1.0);
  CHECK_FALSE(held.try_cast<Array<String>>().has_value());
  Array<Node> nodes{Node(make_object<NodeObj>(1)), Node(make_object<NodeObj>(2))};
  CHECK(nodes[1]->value == 2);
  CHECK(Function::GetGlobalRequired("ffi.ArraySize")(nodes).cast<int>() == 2);
}

TEST_CASE("List mutates through the core and is shared by reference") {
  List<String> l{"a"};
  List<String> alias = l;
  l.push_back("b");
  l.push_back(std::string(20, 'c'));
  CHECK(alias.size() == 3);
  CHECK(alias[1] == "b");
  CHECK(l.pop() == std::string(20, 'c'));
  l.set(0, "z");
  CHECK(alias.to_vector() == std::vector<String>{"z", "b"});
  CHECK_THROWS_AS(l.at(10), Error);
}

TEST_CASE("Map and Dict through the core's hashing") {
  Map<String, int64_t> m{{"one", 1}, {"two", 2}};
  CHECK(m.size() == 2);
  CHECK(m.at("two") == 2);
  CHECK(m.count("three") == 0);
  CHECK_FALSE(m.get("three").has_value());
  CHECK_THROWS_AS(m.at("three"), Error);
  CHECK(m.items().size() == 2);
  Dict<int64_t, String> d;
  d.set(1, "a");
  d.set(2, "b");
  d.set(1, "c");
  CHECK(d.size() == 2);
  CHECK(d[1] == "c");
  d.erase(1);
  CHECK((d.items() == std::vector<std::pair<int64_t, String>>{{2, "b"}}));
  CHECK(Any(d).try_cast<Dict<int64_t, String>>().has_value());
  CHECK_FALSE(Any(d).try_cast<Dict<String, String>>().has_value());
}

TEST_CASE("Shape, Optional, Variant and Tuple") {
  Shape s{2, 3, 4};
  CHECK(s.size() == 3);
  CHECK(s.product() == 24);
  CHECK(Any(s).type_index() == kTVMFFIShape);
  Optional<int64_t> none;
  CHECK(Any(none).is_none());
  CHECK(Any(5).cast<Optional<int64_t>>().value() == 5);
  CHECK_FALSE(Any().cast<Optional<Node>>().has_value());
  CHECK_THROWS_AS(none.value(), Error);
  Variant<int64_t, String> v = Any("text").cast<Variant<int64_t, String>>();
  CHECK(v.as<String>().value() == "text");
  CHECK_FALSE(v.as<Node>().has_value());
  using NodeOrString = Variant<Node, String>;
  CHECK_THROWS_WITH_AS(Any(1.5).cast<NodeOrString>(),
                       "TypeError: Cannot convert from type `float` to `Variant<cpptest.Node, str>`", Error);
  Tuple<int64_t, String> t(7, "seven");
  CHECK(t.get<0>() == 7);
  CHECK(t.get<1>() == "seven");
  CHECK(Any(t).try_cast<Tuple<int64_t, String>>().has_value());
  CHECK_FALSE(Any(t).try_cast<Tuple<int64_t, int64_t>>().has_value());
}

// ---- tensors ----------------------------------------------------------------------

TEST_CASE("DataType and Device as values") {
  DataType f32("float32");
  CHECK(f32 == DataType::Float(32));
  CHECK(f32.str() == "float32");
  CHECK(DataType::Int(8, 4).str() == "int8x4");
  CHECK_THROWS_AS(DataType("floaty"), Error);
  CHECK(Any(f32).cast<DataType>() == f32);
  CHECK(Any("int32").cast<DataType>() == DataType::Int(32));
  CHECK(Any(Device::CPU(1)).cast<Device>() == Device(kDLCPU, 1));
}

TEST_CASE("Tensor: allocated from C++, read inline, passed as a view") {
  Tensor t = Tensor::EmptyCPU({2, 3}, DataType::Float(32));
  CHECK(t.ndim() == 2);
  CHECK(t.numel() == 6);
  CHECK(t.shape() == std::vector<int64_t>{2, 3});
  CHECK(t.strides() == std::vector<int64_t>{3, 1});
  CHECK(t.IsContiguous());
  CHECK(t.dtype() == DataType::Float(32));
  CHECK(t.device() == Device::CPU());
  float* data = static_cast<float*>(t.data_ptr());
  for (int i = 0; i < 6; ++i) data[i] = static_cast<float>(i);
  Function sum = Function::FromTyped([](TensorView v) {
    double s = 0;
    const float* p = static_cast<const float*>(v.data_ptr());
    for (int64_t i = 0; i < v.numel(); ++i) s += p[i];
    return s;
  });
  CHECK(sum(t).cast<double>() == 15.0);
  CHECK(Any(t).cast<Tensor>().same_as(t));
  TetherDLManagedTensorVersioned* exported = t.ToDLPackVersioned();
  CHECK(exported->dl_tensor.data == t.data_ptr());
  CHECK(t.use_count() == 2);
  exported->deleter(exported);
  CHECK(t.use_count() == 1);
}

// ---- reflection ---------------------------------------------------------------------

namespace {
const TVMFFIFieldInfo* FindField(int32_t type_index, const std::string& name) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  for (int32_t i = 0; i < info->num_fields; ++i) {
    if (std::string(info->fields[i].name.data, info->fields[i].name.size) == name) return &info->fields[i];
  }
  return nullptr;
}
const TVMFFIMethodInfo* FindMethod(int32_t type_index, const std::string& name) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (std::string(info->methods[i].name.data, info->methods[i].name.size) == name) return &info->methods[i];
  }
  return nullptr;
}
}  // namespace

TEST_CASE("reflected fields are read and written through the registry's getters and setters") {
  Node n(make_object<NodeObj>(21, "first"));
  const TVMFFIFieldInfo* value = FindField(NodeObj::RuntimeTypeIndex(), "value");
  const TVMFFIFieldInfo* name = FindField(NodeObj::RuntimeTypeIndex(), "name");
  REQUIRE(value != nullptr);
  REQUIRE(name != nullptr);
  CHECK(std::string(value->doc.data, value->doc.size) == "the value");
  CHECK((value->flags & kTVMFFIFieldFlagBitMaskWritable) == 0);
  CHECK((name->flags & kTVMFFIFieldFlagBitMaskWritable) != 0);
  CHECK(value->field_static_type_index == kTVMFFIInt);
  char* base = reinterpret_cast<char*>(n.get_mutable());
  TVMFFIAny out = TVMFFIAny();
  REQUIRE(value->getter(base + value->offset, &out) == 0);
  CHECK(Any::FromRawOwned(out).cast<int64_t>() == 21);
  Any new_name("second");
  auto setter = reinterpret_cast<TVMFFIFieldSetter>(name->setter);
  REQUIRE(setter(base + name->offset, &new_name.raw()) == 0);
  CHECK(n->name == "second");
  Any wrong(3);
  CHECK(setter(base + name->offset, &wrong.raw()) != 0);  // a TypeError, raised
  TVMFFIObjectHandle raised = nullptr;
  TVMFFIErrorMoveFromRaised(&raised);
  REQUIRE(raised != nullptr);
  CHECK(Error(detail::UnsafeInit{}, ObjectPtr<Object>::Adopt(static_cast<Object*>(raised))).kind() == "TypeError");
}

TEST_CASE("reflected methods, constructor and type attributes") {
  Node n(make_object<NodeObj>(4));
  const TVMFFIMethodInfo* twice = FindMethod(NodeObj::RuntimeTypeIndex(), "twice");
  REQUIRE(twice != nullptr);
  Function f = AnyView(twice->method).cast<Function>();
  CHECK(f(n).cast<int64_t>() == 8);
  Function add = AnyView(FindMethod(NodeObj::RuntimeTypeIndex(), "add")->method).cast<Function>();
  add(n, 3);
  CHECK(n->value == 7);
  CHECK_THROWS_AS(f(String("not a node")), Error);
  const TVMFFIMethodInfo* init = FindMethod(NodeObj::RuntimeTypeIndex(), "__ffi_init__");
  REQUIRE(init != nullptr);
  CHECK((init->flags & kTVMFFIFieldFlagBitMaskIsStaticMethod) != 0);
  Node made = AnyView(init->method).cast<Function>()(11, "made").cast<Node>();
  CHECK(made->value == 11);
  CHECK(made->name == "made");
  TVMFFIByteArray attr{"cpptest.kind", 12};
  const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&attr);
  REQUIRE(col != nullptr);
  int32_t i = NodeObj::RuntimeTypeIndex() - col->begin_index;
  REQUIRE(i >= 0);
  REQUIRE(i < col->size);
  CHECK(AnyView(col->data[i]).cast<String>() == "node");
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(NodeObj::RuntimeTypeIndex());
  REQUIRE(info->metadata != nullptr);
  TVMFFIObjectHandle created = nullptr;
  REQUIRE(info->metadata->creator(&created) == 0);
  Node def(detail::UnsafeInit{}, ObjectPtr<Object>::Adopt(static_cast<Object*>(created)));
  CHECK(def->name == "node");
}
