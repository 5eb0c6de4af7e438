//! Objects, weak references, threads, Any, errors and containers through the
//! safe Rust API.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tether_core::abi::{type_index as ti, TVMFFIObject};
use tether_core::containers::OpaqueObj;
use tether_core::object::header_placeholder;
use tether_core::values::error;
use tether_core::{Any, Array, Error, Function, List, Map, ObjectPtr, ObjectRef, ObjectType, Shape};

#[repr(C)]
struct Tracked {
    header: TVMFFIObject,
    drops: Arc<AtomicUsize>,
}
tether_core::object_type!(Tracked, "test.values.Tracked");

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn tracked() -> (ObjectRef, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let p = ObjectPtr::new(Tracked { header: header_placeholder(), drops: drops.clone() }).unwrap();
    (p.into_object_ref(), drops)
}

#[test]
fn strong_count_and_destruction() {
    let (a, drops) = tracked();
    assert_eq!(a.use_count(), 1);
    let b = a.clone();
    assert_eq!(a.use_count(), 2);
    assert!(a.same_as(&b));
    drop(b);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(a);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn weak_reference_outlives_strong_ones() {
    let (a, drops) = tracked();
    let w = a.downgrade();
    assert!(!w.expired());
    let again = w.upgrade().expect("alive");
    assert!(again.same_as(&a));
    drop((a, again));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "contents destroyed when strong count hits zero");
    assert!(w.expired());
    assert!(w.upgrade().is_none());
    let w2 = w.clone();
    drop(w);
    assert!(w2.upgrade().is_none(), "storage is still readable through the last weak ref");
}

#[test]
fn eight_threads_share_objects() {
    let (a, drops) = tracked();
    let arr = Array::new(vec![Any::from(a.clone()), Any::string("shared string that lives on the heap").unwrap()]).unwrap();
    let w = a.downgrade();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let a = a.clone();
            let arr = arr.clone();
            let w = w.clone();
            std::thread::spawn(move || {
                for i in 0..20_000 {
                    let c = a.clone();
                    let item = arr.get(0).unwrap();
                    assert!(item.as_object().unwrap().same_as(&c));
                    if (i + t) % 7 == 0 {
                        assert!(w.upgrade().is_some());
                    }
                    drop((c, item));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(a.use_count(), 2, "only `a` and the array's element remain");
    drop((a, arr));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(w.upgrade().is_none());
}

#[test]
fn any_conversions_report_clear_errors() {
    let i = Any::from(42i64);
    assert_eq!(i.get::<i64>().unwrap(), 42);
    assert_eq!(i.get::<f64>().unwrap(), 42.0);
    let e = i.get::<String>().unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(e.message(), "expected str, got int");
    assert!(Any::from(true).get::<bool>().unwrap());
    assert_eq!(Any::from(2.5f64).get::<f64>().unwrap(), 2.5);
    assert!(Any::from(2.5f64).get::<i64>().is_err());
    assert!(Any::none().get::<Option<i64>>().unwrap().is_none());
    let (o, _) = tracked();
    let v = Any::from(o.clone());
    assert_eq!(v.type_key(), "test.values.Tracked");
    assert_eq!(o.use_count(), 2);
    let e = v.get::<ObjectPtr<tether_core::containers::ArrayObj>>().unwrap_err();
    assert!(e.message().contains("expected ffi.Array, got test.values.Tracked"), "{}", e.message());
    drop(v);
    assert_eq!(o.use_count(), 1);
}

#[test]
fn errors_travel_through_the_raised_channel() {
    error::set_raised(Error::value_error("bad value"));
    let obj = error::take_raised_object().expect("raised");
    assert_eq!(obj.type_index(), ti::kTVMFFIError);
    let e = Error::from_object(obj.clone());
    assert_eq!((e.kind(), e.message()), ("ValueError", "bad value"));
    assert!(error::take_raised().is_none(), "taking clears the slot");
    // Re-raising an error object keeps its identity.
    error::set_raised(e);
    let again = error::take_raised_object().unwrap();
    assert!(again.same_as(&obj));
    // A failing function surfaces the callee's error to the caller.
    let f = Function::from_closure(|args| Err(Error::new(args[0].to_owned()?.get::<String>()?, args[1].to_owned()?.get::<String>()?))).unwrap();
    let err = f.call(&[Any::string("KeyError").unwrap(), Any::string("no such key").unwrap()]).unwrap_err();
    assert_eq!((err.kind(), err.message()), ("KeyError", "no such key"));
}

#[test]
fn containers_behave_like_sequences_and_maps() {
    let arr = Array::new((0..10).map(|i| Any::from(i as i64)).collect()).unwrap();
    assert_eq!(arr.len(), 10);
    assert_eq!(arr.get(-1).unwrap().get::<i64>().unwrap(), 9);
    assert_eq!(arr.get(10).unwrap_err().kind(), "IndexError");

    let list = List::new(vec![]).unwrap();
    for i in 0..100 {
        list.push(Any::from(i as i64)).unwrap();
    }
    list.insert(0, Any::from(-1i64)).unwrap();
    assert_eq!(list.len(), 101);
    assert_eq!(list.pop(-1).unwrap().get::<i64>().unwrap(), 99);
    list.set(1, Any::string("replaced").unwrap()).unwrap();
    assert_eq!(list.get(1).unwrap().get::<String>().unwrap(), "replaced");
    assert_eq!(list.get(0).unwrap().get::<i64>().unwrap(), -1);
    list.clear();
    assert!(list.is_empty());

    let long = "a key that is longer than seven bytes";
    let m = Map::new(vec![
        (Any::string(long).unwrap(), Any::from(1i64)),
        (Any::from(7i64), Any::string("seven").unwrap()),
        (Any::string("k").unwrap(), Any::from(3i64)),
    ])
    .unwrap();
    assert_eq!(m.len(), 3);
    // A different String object with the same content finds the entry.
    assert_eq!(m.get(&Any::string(long).unwrap()).unwrap().get::<i64>().unwrap(), 1);
    assert_eq!(m.get(&Any::from(7i64)).unwrap().get::<String>().unwrap(), "seven");
    assert!(m.get(&Any::bytes(b"k").unwrap()).is_none(), "bytes and str keys differ");

    let s = Shape::new(&[2, 3, 4]).unwrap();
    assert_eq!(s.dims(), &[2, 3, 4]);
}

#[test]
fn opaque_objects_call_their_deleter_once() {
    static FREED: AtomicUsize = AtomicUsize::new(0);
    unsafe extern "C" fn del(h: *mut std::ffi::c_void) {
        assert_eq!(h as usize, 0x1234);
        FREED.fetch_add(1, Ordering::SeqCst);
    }
    let o = OpaqueObj::create(0x1234 as *mut _, ti::kTVMFFIOpaquePyObject, Some(del)).unwrap();
    // SAFETY: made by OpaqueObj::create.
    assert_eq!(unsafe { OpaqueObj::handle_of(&o) } as usize, 0x1234);
    let o2 = o.clone();
    drop(o);
    assert_eq!(FREED.load(Ordering::SeqCst), 0);
    drop(o2);
    assert_eq!(FREED.load(Ordering::SeqCst), 1);
    assert!(OpaqueObj::create(std::ptr::null_mut(), ti::kTVMFFIInt, None).is_err());
}

#[test]
fn aligned_objects_through_the_registry() {
    #[repr(C, align(256))]
    struct Wide {
        header: TVMFFIObject,
        payload: [u8; 300],
    }
    tether_core::object_type!(Wide, "test.values.Wide");
    let p = ObjectPtr::new(Wide { header: header_placeholder(), payload: [7; 300] }).unwrap();
    assert_eq!(p.as_ptr() as usize % 256, 0);
    assert_eq!(p.payload[299], 7);
    assert_eq!(p.to_object_ref().type_index(), Wide::type_index());
}

#[test]
fn list_reserve_refuses_counts_whose_size_overflows() {
    let reserve = Function::get_global("ffi.ListReserve").expect("ffi.ListReserve");
    let list = Function::get_global("ffi.List").expect("ffi.List").call(&[]).expect("a list");
    for count in [i64::MAX, i64::MAX / 2, 1i64 << 62, 1i64 << 60] {
        let err = reserve.call(&[list.clone(), Any::from(count)]).expect_err("refused");
        assert!(format!("{err:?}").contains("cannot reserve room"), "{err:?}");
    }
    reserve.call(&[list.clone(), Any::from(16i64)]).expect("a modest reserve works");
}

#[test]
fn sequences_take_over_owned_buffers_and_refuse_bad_ones() {
    use tether_core::abi::{TVMFFIAny, TVMFFIObjectHandle};
    use tether_core::c_api::TetherFFISeqFromOwned;

    let (obj, drops) = tracked();
    let make = |kind: i32, items: &mut Vec<TVMFFIAny>| {
        let mut out: TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: `items` holds owned values; `out` is a valid slot.
        let rc = unsafe { TetherFFISeqFromOwned(items.as_mut_ptr(), items.len() as i64, kind, &mut out) };
        (rc, out)
    };
    for kind in [ti::kTVMFFIArray, ti::kTVMFFIList] {
        let mut items = vec![Any::from(1i64).into_raw(), Any::from_object(obj.clone()).into_raw(), Any::string("a heap string here").unwrap().into_raw()];
        let (rc, out) = make(kind, &mut items);
        assert_eq!(rc, 0);
        // The values moved: the buffer's copies are not released again.
        std::mem::forget(items);
        // SAFETY: a new reference to a live object.
        let made = unsafe { ObjectRef::from_raw_owned(std::ptr::NonNull::new(out as *mut TVMFFIObject).unwrap()) };
        assert_eq!(made.type_index(), kind);
        assert_eq!(obj.use_count(), 2, "the container holds the one reference the buffer had");
        let seq: Vec<Any> = if kind == ti::kTVMFFIArray { Array::from_object(made).unwrap().iter().cloned().collect() } else { List::from_object(made).unwrap().to_vec() };
        assert_eq!(seq[0].get::<i64>().unwrap(), 1);
        assert_eq!(seq[2].view().str_bytes(), Some(&b"a heap string here"[..]));
        drop(seq);
        assert_eq!(obj.use_count(), 1);
    }
    // Refused: nothing is taken, and the error names what was wrong.
    let mut items = vec![Any::from_object(obj.clone()).into_raw()];
    let bad_view = TVMFFIAny { type_index: ti::kTVMFFIRawStr, small_str_len: 0, value: tether_core::abi::TVMFFIAnyValue { v_c_str: c"x".as_ptr() } };
    let mut with_view = vec![Any::from(2i64).into_raw(), bad_view];
    for (rc_items, kind, what) in [
        (&mut items, 3, "neither an Array"),
        (&mut with_view, ti::kTVMFFIArray, "value 1 has type index 8"),
    ] {
        let (rc, _) = make(kind, rc_items);
        assert_ne!(rc, 0);
        let e = error::take_raised().expect("an error raised");
        assert!(e.message().contains(what), "{}", e.message());
    }
    // SAFETY: NULL items for a nonzero count, and a negative count.
    let null_items = unsafe { TetherFFISeqFromOwned(std::ptr::null_mut(), 2, ti::kTVMFFIArray, &mut std::ptr::null_mut()) };
    let negative = unsafe { TetherFFISeqFromOwned(std::ptr::null_mut(), -1, ti::kTVMFFIList, &mut std::ptr::null_mut()) };
    assert!(null_items != 0 && negative != 0);
    assert!(error::take_raised().unwrap().message().contains("negative length"));
    assert_eq!(obj.use_count(), 2, "the refused buffer still owns its reference");
    // SAFETY: the refused buffer's value is still ours.
    drop(unsafe { Any::from_raw_owned(items[0]) });
    drop(obj);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}
