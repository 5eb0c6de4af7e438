//! Map and Dict in TVM-FFI's small and dense layouts: growth, erase,
//! collisions, iteration order, and a randomized comparison with a model.

use tether_core::{Any, Dict, Function, Map};

fn int(i: i64) -> Any {
    Any::from(i)
}

fn keys_of(items: &[(Any, Any)]) -> Vec<i64> {
    items.iter().map(|(k, _)| k.get::<i64>().unwrap()).collect()
}

#[test]
fn small_maps_grow_two_four_then_turn_dense_with_eight_slots() {
    let d = Dict::new(vec![]).unwrap();
    assert_eq!(d.layout(), (true, 2));
    d.set(int(1), int(1)).unwrap();
    d.set(int(2), int(2)).unwrap();
    assert_eq!(d.layout(), (true, 2));
    d.set(int(3), int(3)).unwrap();
    assert_eq!(d.layout(), (true, 4));
    d.set(int(4), int(4)).unwrap();
    assert_eq!(d.layout(), (true, 4));
    d.set(int(5), int(5)).unwrap();
    // TVM-FFI's table for 4 entries: 8 slots.
    assert_eq!(d.layout(), (false, 8));
    assert_eq!(keys_of(&d.items()), vec![1, 2, 3, 4, 5]);
    for i in 1..=5 {
        assert_eq!(d.get(&int(i)).unwrap().get::<i64>().unwrap(), i);
    }
    // The table doubles as it fills (load factor 0.99), keeping the order.
    for i in 6..=40 {
        d.set(int(i), int(i)).unwrap();
        let (small, slots) = d.layout();
        assert!(!small && slots.is_power_of_two() && slots >= d.len() as u64, "{slots} slots for {}", d.len());
    }
    assert_eq!(d.layout(), (false, 64));
    assert_eq!(keys_of(&d.items()), (1..=40).collect::<Vec<_>>());

    let m = Map::new((0..5).map(|i| (int(i), int(i))).collect()).unwrap();
    assert_eq!(m.layout(), (false, 8));
    let m = Map::new((0..3).map(|i| (int(i), int(i))).collect()).unwrap();
    assert_eq!(m.layout(), (true, 4));
}

#[test]
fn overwriting_keeps_position_when_small_and_moves_to_the_end_when_dense() {
    let small = Dict::new((1..=3).map(|i| (int(i), int(i))).collect()).unwrap();
    small.set(int(1), int(11)).unwrap();
    assert_eq!(keys_of(&small.items()), vec![1, 2, 3]);
    let dense = Dict::new((0..10).map(|i| (int(i), int(i))).collect()).unwrap();
    dense.set(int(3), int(33)).unwrap();
    assert_eq!(keys_of(&dense.items()), vec![0, 1, 2, 4, 5, 6, 7, 8, 9, 3]);
    assert_eq!(dense.get(&int(3)).unwrap().get::<i64>().unwrap(), 33);
    // ffi.Map with a repeated key keeps the last value.
    let m = Map::new(vec![(int(1), int(1)), (int(1), int(2))]).unwrap();
    assert_eq!(m.len(), 1);
    assert_eq!(m.get(&int(1)).unwrap().get::<i64>().unwrap(), 2);
}

#[test]
fn erase_keeps_the_order_of_the_rest_in_both_layouts() {
    for n in [3i64, 4, 40] {
        let d = Dict::new((0..n).map(|i| (int(i), int(i * 10))).collect()).unwrap();
        assert!(d.erase(&int(1)));
        assert!(!d.erase(&int(1)));
        let want: Vec<i64> = (0..n).filter(|&i| i != 1).collect();
        assert_eq!(keys_of(&d.items()), want);
        assert!(d.get(&int(1)).is_none());
        for &k in &want {
            assert_eq!(d.get(&int(k)).unwrap().get::<i64>().unwrap(), k * 10);
        }
        d.clear();
        assert!(d.is_empty());
        assert!(d.items().is_empty());
        d.set(int(7), int(7)).unwrap();
        assert_eq!(keys_of(&d.items()), vec![7]);
    }
}

#[test]
fn strings_and_bytes_are_keys_by_content_objects_by_identity() {
    let long = "a key that is longer than seven bytes";
    let f1 = Any::from_object(Function::from_closure(|_| Ok(Any::none())).unwrap().into_object());
    let f2 = Any::from_object(Function::from_closure(|_| Ok(Any::none())).unwrap().into_object());
    let d = Dict::new(vec![]).unwrap();
    for i in 0..20 {
        d.set(int(i), int(i)).unwrap();
    }
    d.set(Any::string(long).unwrap(), int(100)).unwrap();
    d.set(Any::string("k").unwrap(), int(101)).unwrap();
    d.set(Any::bytes(b"k").unwrap(), int(102)).unwrap();
    d.set(f1.clone(), int(103)).unwrap();
    assert_eq!(d.get(&Any::string(long).unwrap()).unwrap().get::<i64>().unwrap(), 100);
    assert_eq!(d.get(&Any::string("k").unwrap()).unwrap().get::<i64>().unwrap(), 101);
    assert_eq!(d.get(&Any::bytes(b"k").unwrap()).unwrap().get::<i64>().unwrap(), 102);
    assert_eq!(d.get(&f1).unwrap().get::<i64>().unwrap(), 103);
    assert!(d.get(&f2).is_none());
    assert!(d.get(&Any::from(true)).is_none(), "bool and int keys differ");
    assert!(d.get(&Any::from(1.0f64)).is_none(), "float and int keys differ");
}

#[test]
fn a_hundred_thousand_keys_with_colliding_chains() {
    const N: i64 = 100_000;
    let d = Dict::new(vec![]).unwrap();
    // Multiples of a large power of two collide heavily under Fibonacci
    // hashing's top bits for small tables, exercising chains and re-homing.
    let key = |i: i64| i.wrapping_mul(1 << 20);
    for i in 0..N {
        d.set(int(key(i)), int(i)).unwrap();
    }
    assert_eq!(d.len(), N as usize);
    for i in (0..N).step_by(2) {
        assert!(d.erase(&int(key(i))));
    }
    assert_eq!(d.len(), (N / 2) as usize);
    for i in 0..N {
        let got = d.get(&int(key(i)));
        if i % 2 == 0 {
            assert!(got.is_none(), "erased key {i} still found");
        } else {
            assert_eq!(got.unwrap().get::<i64>().unwrap(), i);
        }
    }
    let order = d.items();
    assert_eq!(order.len(), (N / 2) as usize);
    assert!(order.iter().enumerate().all(|(j, (_, v))| v.get::<i64>().unwrap() == 2 * j as i64 + 1));
    let m = Map::new((0..N).map(|i| (Any::string(&format!("key-{i}")).unwrap(), int(i))).collect()).unwrap();
    assert_eq!(m.len(), N as usize);
    assert_eq!(m.get(&Any::string("key-77777").unwrap()).unwrap().get::<i64>().unwrap(), 77777);
}

/// A tiny deterministic generator (no dependency).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn random_operations_match_an_ordered_model() {
    let mut rng = Lcg(7);
    let d = Dict::new(vec![]).unwrap();
    let mut model: Vec<(i64, i64)> = Vec::new();
    for step in 0..20_000 {
        let k = rng.next(300) as i64;
        match rng.next(10) {
            0..=5 => {
                let small = d.layout().0;
                d.set(int(k), int(step)).unwrap();
                match model.iter().position(|&(mk, _)| mk == k) {
                    Some(p) if small => model[p].1 = step,
                    Some(p) => {
                        model.remove(p);
                        model.push((k, step));
                    }
                    None => model.push((k, step)),
                }
            }
            6..=8 => {
                let had = model.iter().position(|&(mk, _)| mk == k);
                assert_eq!(d.erase(&int(k)), had.is_some());
                if let Some(p) = had {
                    model.remove(p);
                }
            }
            _ => {
                if rng.next(50) == 0 {
                    d.clear();
                    model.clear();
                }
            }
        }
        if step % 97 == 0 {
            let got: Vec<(i64, i64)> =
                d.items().iter().map(|(k, v)| (k.get::<i64>().unwrap(), v.get::<i64>().unwrap())).collect();
            assert_eq!(got, model, "step {step}");
        }
    }
}

#[test]
fn dict_survives_concurrent_writers_and_readers() {
    let d = Dict::new(vec![]).unwrap();
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let d = d.clone();
            s.spawn(move || {
                for i in 0..5_000i64 {
                    let k = (i * 4 + t) % 700;
                    d.set(int(k), int(i)).unwrap();
                    if i % 3 == 0 {
                        d.erase(&int(k));
                    }
                    let _ = d.get(&int(i % 700));
                    if i % 500 == 0 {
                        let _ = d.items();
                    }
                }
            });
        }
    });
    assert!(d.len() <= 700);
    for (k, _) in d.items() {
        assert!(d.contains(&k));
    }
}

#[test]
fn bulk_built_maps_match_the_layout_and_order_of_one_by_one_insertion() {
    for n in [5i64, 6, 8, 9, 63, 64, 65, 127, 1000, 4097] {
        let pairs: Vec<_> = (0..n).map(|i| (int(i * 7919), int(i))).collect();
        let bulk = Map::new(pairs.clone()).unwrap();
        let d = Dict::new(vec![]).unwrap();
        for (k, v) in pairs {
            d.set(k, v).unwrap();
        }
        assert_eq!(bulk.layout(), d.layout(), "{n} pairs");
        assert_eq!(keys_of(&bulk.items()), keys_of(&d.items()), "{n} pairs");
        for i in 0..n {
            assert_eq!(bulk.get(&int(i * 7919)).unwrap().get::<i64>().unwrap(), i);
        }
    }
    // Repeated keys behave as one-by-one insertion: while the map is small
    // a repeated key keeps its position (four distinct keys stay small);
    // once it is dense, a repeated key moves to the back, as Dict::set.
    let small = Map::new(vec![(int(1), int(1)), (int(2), int(2)), (int(3), int(3)), (int(4), int(4)), (int(1), int(9))]).unwrap();
    assert_eq!(small.layout(), (true, 4));
    assert_eq!(keys_of(&small.items()), vec![1, 2, 3, 4]);
    assert_eq!(small.get(&int(1)).unwrap().get::<i64>().unwrap(), 9);
    let pairs: Vec<_> = [1, 2, 3, 4, 5, 1].iter().map(|&i| (int(i), int(i * 10))).collect();
    let dense = Map::new(pairs.clone()).unwrap();
    let d = Dict::new(vec![]).unwrap();
    for (k, v) in pairs {
        d.set(k, v).unwrap();
    }
    assert_eq!(keys_of(&dense.items()), keys_of(&d.items()));
    assert_eq!(dense.layout(), d.layout());
}

#[test]
fn maps_walk_in_place_by_position_in_iteration_order() {
    for n in [0i64, 1, 4, 5, 100] {
        let m = Map::new((0..n).map(|i| (int(i * 31), int(-i))).collect()).unwrap();
        let mut walked = Vec::new();
        let mut pos = m.first();
        while let Some((k, v, after)) = m.pair_at(pos) {
            walked.push((k.clone(), v.clone()));
            pos = after;
        }
        assert_eq!(keys_of(&walked), keys_of(&m.items()), "{n} pairs");
        assert!(walked.iter().all(|(k, v)| k.get::<i64>().unwrap() == -31 * v.get::<i64>().unwrap()));
        assert!(m.pair_at(pos).is_none(), "the end stays the end");
    }
    // A position taken from a larger map names no pair of a smaller one.
    let big = Map::new((0..100).map(|i| (int(i), int(i))).collect()).unwrap();
    let small = Map::new(vec![(int(1), int(1))]).unwrap();
    let mut pos = big.first();
    for _ in 0..50 {
        pos = big.pair_at(pos).unwrap().2;
    }
    assert!(small.pair_at(pos).is_none());
}
