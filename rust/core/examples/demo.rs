//! A tour of the core's Rust API: objects, containers, functions, errors.
use tether_core::values::function::{arg, expect_args};
use tether_core::{Any, Array, Error, Function, Map};

fn main() -> Result<(), Error> {
    let greeting = Any::string("hello from tether-core")?;
    let arr = Array::new(vec![greeting.clone(), Any::from(42i64), Any::from(2.5f64)])?;
    println!("array of {} items, first = {:?}", arr.len(), arr.get(0)?);

    Function::register_global("demo.add", |args| {
        expect_args(args, 2, "demo.add")?;
        Ok(Any::from(arg::<i64>(args, 0, "a")? + arg::<i64>(args, 1, "b")?))
    })?;
    let add = Function::get_global("demo.add").expect("registered");
    println!("demo.add(40, 2) = {:?}", add.call(&[Any::from(40i64), Any::from(2i64)])?);

    let echo = Function::from_closure(|args| expect_args(args, 1, "echo").and_then(|_| args[0].to_owned()))?;
    let back = echo.call(&[Any::from(arr.as_object())])?;
    println!("echo returns the same object: {}", back.as_object().unwrap().same_as(&arr.as_object()));

    let m = Map::new(vec![(Any::string("answer")?, Any::from(42i64))])?;
    println!("map[\"answer\"] = {:?}", m.get(&Any::string("answer")?).expect("present"));

    let err = add.call(&[Any::from(1i64)]).unwrap_err();
    println!("calling with one argument fails cleanly: {err}");
    Ok(())
}
