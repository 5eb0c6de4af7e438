//! Types shaped like the C++ classes of upstream's dataclass tests: a
//! three-level hierarchy with narrow (`int32_t`, `float`) fields, layouts
//! with members that are not reflected (a hidden field, a vtable pointer),
//! a holder of enum values, and the variations of the generated
//! `__ffi_init__` (fields excluded from it, keyword-only fields, defaults,
//! inheritance, and a type with no constructor at all).

use tether_sys::abi::field_flag::{kInitOff, kKwOnly, kReprOff};

use crate::ffi::{Any, Error};
use crate::reflect::{field, TypeDef};
use crate::sig::{obj, Ty};

fn int(name: &'static str) -> crate::reflect::FieldSpec {
    field(name, Ty::Int).rw()
}

pub fn register() -> Result<(), Error> {
    TypeDef::new("testing.TestCxxClassBase")
        .field(int("v_i64").flag(kReprOff))
        .field(int("v_i32").narrow().flag(kReprOff))
        .register()?;
    TypeDef::new("testing.TestCxxClassDerived")
        .parent("testing.TestCxxClassBase")
        .field(field("v_f64", Ty::Float).rw())
        .field(field("v_f32", Ty::Float).narrow().rw().default(Any::float(8.0)))
        .register()?;
    TypeDef::new("testing.TestCxxClassDerivedDerived")
        .parent("testing.TestCxxClassDerived")
        .field(field("v_str", Ty::Str).rw().default(Any::string("default")?))
        .field(field("v_bool", Ty::Bool).rw())
        .register()?;
    // An int64 member that is not reflected sits between the two fields.
    TypeDef::new("testing.TestCxxClassHiddenField")
        .final_type()
        .field(int("v_i64"))
        .field(int("v_i32").narrow().at(40))
        .total_size(48)
        .register()?;
    // A virtual destructor adds a vtable pointer to the instance.
    TypeDef::new("testing.TestCxxClassPolymorphic").final_type().field(int("v_i64")).total_size(40).register()?;
    TypeDef::new("testing.TestCxxEnumHolder")
        .field(field("priority", obj("testing.TestCxxIntEnum")).rw())
        .field(field("opcode", obj("testing.TestCxxStrEnum")).rw())
        .register()?;
    TypeDef::new("testing.TestCxxInitSubset")
        .field(int("required_field"))
        .field(int("optional_field").flag(kInitOff).default(Any::int(-1)).initial(Any::int(-1)))
        .field(field("note", Ty::Str).rw().flag(kInitOff).default(Any::string("default")?))
        .register()?;
    TypeDef::new("testing.TestCxxKwOnly")
        .field(int("x").flag(kKwOnly))
        .field(int("y").flag(kKwOnly))
        .field(int("z").flag(kKwOnly))
        .field(int("w").flag(kKwOnly).default(Any::int(100)))
        .register()?;
    TypeDef::new("testing.TestCxxAutoInit")
        .field(int("a"))
        .field(int("b").flag(kInitOff).default(Any::int(42)))
        .field(int("c").flag(kKwOnly))
        .field(int("d").default(Any::int(99)))
        .register()?;
    TypeDef::new("testing.TestCxxAutoInitSimple").field(int("x")).field(int("y")).register()?;
    TypeDef::new("testing.TestCxxAutoInitAllInitOff")
        .field(int("x").flag(kInitOff).default(Any::int(7)).initial(Any::int(7)))
        .field(int("y").flag(kInitOff).default(Any::int(9)))
        // No reflection default: the constructor's value stays.
        .field(int("z").flag(kInitOff).initial(Any::int(1234)))
        .register()?;
    TypeDef::new("testing.TestCxxAutoInitKwOnlyDefaults")
        .field(int("p_required"))
        .field(int("p_default").default(Any::int(11)))
        .field(int("k_required").flag(kKwOnly))
        .field(int("k_default").flag(kKwOnly).default(Any::int(22)))
        .field(int("hidden").flag(kInitOff).default(Any::int(33)))
        .register()?;
    TypeDef::new("testing.TestCxxAutoInitParent")
        .child_slots(1)
        .field(int("parent_required"))
        .field(int("parent_default").default(Any::int(5)))
        .register()?;
    TypeDef::new("testing.TestCxxAutoInitChild")
        .parent("testing.TestCxxAutoInitParent")
        .final_type()
        .field(int("child_required"))
        .field(int("child_kw_only").flag(kKwOnly))
        .register()?;
    TypeDef::new("testing.TestCxxNoAutoInit").init_off().field(int("x")).field(int("y")).register()?;
    Ok(())
}
