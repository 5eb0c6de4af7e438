//! The FFI globals of structural rewriting (`ffi.StructuralMap`,
//! `ffi.StructuralMutate` and the `ffi.StructuralMutator` methods its
//! callbacks use): typed argument checks in front of the engine in the
//! parent module.

use super::*;

const ENTRIES: &str = "Array<Tuple<int, ffi.Function>>";

/// A global with a typed signature (see [`Sig::into_global`]).
fn typed(sig: Sig, body: fn(&Sig, &[AnyView<'_>]) -> Result<Any, Error>) -> (&'static str, Result<Function, Error>) {
    sig.into_global(body)
}

fn mutator_arg(sig: &Sig, args: &[AnyView<'_>]) -> Result<MutatorRef, Error> {
    ensure_reflection();
    MutatorRef::from_object(sig.object(args, 0, StructuralMutatorObj::type_index())?)
}

const MUTATOR: &str = "ffi.StructuralMutator";

pub(crate) fn globals() -> Vec<Global> {
    vec![
        typed(
            Sig {
                name: "ffi.StructuralMap",
                params: &["Any", ENTRIES, ENTRIES, "int"],
                ret: "Any",
            },
            |s, a| {
                let (callbacks, with_kind) = (s.entries(a, 1, false)?, s.entries(a, 2, false)?);
                let order = s.int(a, 3)?;
                structural_map(a[0].to_owned()?, callbacks, with_kind, order != 0)
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralMutate",
                params: &["Any", "Array<Tuple<int, ffi.Function, bool>>"],
                ret: "Any",
            },
            |s, a| {
                let callbacks = s.entries(a, 1, true)?;
                structural_mutate(a[0].to_owned()?, callbacks)
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralMutatorMutate",
                params: &[MUTATOR, "AnyView"],
                ret: "Any",
            },
            |s, a| {
                let v = a[1].to_owned()?;
                Ok(mutator_arg(s, a)?.mutate_raw(v.as_raw(), InplaceMode::Disallow)?.unwrap_or(v))
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralMutatorDefaultMutate",
                params: &[MUTATOR, "AnyView"],
                ret: "Any",
            },
            |s, a| {
                let v = a[1].to_owned()?;
                Ok(mutator_arg(s, a)?.default_mutate_raw(v.as_raw(), InplaceMode::Disallow)?.unwrap_or(v))
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralMutatorVarRemapGet",
                params: &[MUTATOR, "AnyView"],
                ret: "Any",
            },
            |s, a| {
                mutator_arg(s, a)?.var_remap_get(a[1].as_raw())
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralMutatorVarRemapSet",
                params: &[MUTATOR, "AnyView", "AnyView"],
                ret: "void",
            },
            |s, a| {
                mutator_arg(s, a)?.var_remap_set(a[1].as_raw(), a[2].as_raw())?;
                Ok(Any::none())
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralMutatorDefRegionKind",
                params: &[MUTATOR],
                ret: "int",
            },
            |s, a| Ok(Any::from(mutator_arg(s, a)?.def_region_kind() as i64)),
        ),
        typed(
            Sig {
                name: "ffi.StructuralMutatorWithDefRegionKind",
                params: &[MUTATOR, "int", "ffi.Function"],
                ret: "Any",
            },
            |s, a| {
                let m = mutator_arg(s, a)?;
                let (k, f) = (s.int(a, 1)? as i32, s.function(a, 2)?);
                m.with_def_region_kind(k, || f.call(&[]))
            },
        ),
    ]
}
