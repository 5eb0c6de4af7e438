//! Structural-visit fixtures: `testing.TestVisitRegions` (fields in the
//! simple and pattern definition regions and one in neither) and
//! `testing.TestVisitHook`, whose `__s_visit__` hook visits its child in
//! the simple region and then a plain value in the region restored after
//! it. `testing.make_visit_region_graph(with_hook)` builds one or the other.

use tether_sys::abi::field_flag::{kSEqHashDefPattern, kSEqHashDefSimple};

use super::construct;
use crate::ffi::{Any, AnyView, Error, Function};
use crate::registration::def;
use crate::reflect::{field, get_field, TypeDef};
use crate::sig::{any_object, Ty};

/// `kTVMFFIDefRegionKindSimple`.
const DEF_REGION_SIMPLE: i64 = 2;

/// The hook: `Optional<VisitInterrupt>`, through the core's visitor globals.
fn visit_hook(args: &[AnyView<'_>]) -> Result<Any, Error> {
    let [visitor, value] = args else {
        return Err(Error::type_error("__s_visit__ takes (visitor, value)"));
    };
    let this = value.object().ok_or_else(|| Error::type_error("__s_visit__ expects a testing.TestVisitHook"))?;
    let child = get_field(&this, "child")?;
    let visit = Function::get_global_required("ffi.StructuralVisitorVisit")?;
    let with_region = Function::get_global_required("ffi.StructuralVisitorWithDefRegionKind")?;
    let visitor = visitor.to_owned()?;
    let (v, inner) = (visitor.clone(), visit.clone());
    let visit_child = Function::from_closure(move |_| inner.call(&[v.clone(), child.clone()]))?;
    let result = with_region.call(&[visitor.clone(), Any::int(DEF_REGION_SIMPLE), visit_child.into_any()])?;
    if !result.is_none() {
        return Ok(result);
    }
    // This sibling sees the region restored after the scoped child visit.
    visit.call(&[visitor, Any::int(4)])
}

pub fn register() -> Result<(), Error> {
    let regions = TypeDef::new("testing.TestVisitRegions")
        .final_type()
        .field(field("simple", Ty::Int).flag(kSEqHashDefSimple).initial(Any::int(1)))
        .field(field("pattern", Ty::Int).flag(kSEqHashDefPattern).initial(Any::int(2)))
        .field(field("ordinary", Ty::Int).initial(Any::int(3)))
        .register()?;
    let hook = TypeDef::new("testing.TestVisitHook")
        .final_type()
        .no_creator()
        .field(field("child", any_object()))
        .attr("__s_visit__", Function::from_closure(visit_hook)?.into_any())
        .register()?;
    let (regions, hook) = (regions.layout, hook.layout);
    def("testing.make_visit_region_graph", vec![Ty::Bool], Ty::Any, move |a| {
        let fields = crate::reflect::instance::instantiate(&regions)?;
        if a[0].view().bool() == Some(true) {
            return Ok(Any::object(construct(&hook, &["child"], vec![Any::object(fields)])?));
        }
        Ok(Any::object(fields))
    })
}
