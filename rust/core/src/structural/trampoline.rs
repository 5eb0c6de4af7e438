//! Recursive traversals run as loops over an explicit stack of
//! continuations, on the caller's thread.
//!
//! A traversal step either finishes ([`Step::Done`]) or asks for a nested
//! step to run first and says what to do with its result
//! ([`Step::Descend`]). [`run`] keeps the pending continuations on a heap
//! vector, so a graph nested 10^6 deep costs memory linear in its depth and
//! no native stack: the visit and mutate engines are written in this form,
//! and only code the core does not control (a custom hook or a callback that
//! itself calls back into the traversal) nests natively — bounded by
//! [`enter`] with an error rather than a crash.

use crate::values::error::Error;

/// What to do with a nested step's result.
pub(crate) type Then<'a, T> = Box<dyn FnOnce(Result<T, Error>) -> Step<'a, T> + 'a>;

/// One step of a traversal producing a `T`.
pub(crate) enum Step<'a, T> {
    /// The step's result.
    Done(Result<T, Error>),
    /// Run the first step (to completion, with its own nested steps), then
    /// hand its result to the continuation.
    Descend(Box<dyn FnOnce() -> Step<'a, T> + 'a>, Then<'a, T>),
}

impl<'a, T: 'a> Step<'a, T> {
    pub(crate) fn ok(value: T) -> Self {
        Step::Done(Ok(value))
    }

    pub(crate) fn err(e: Error) -> Self {
        Step::Done(Err(e))
    }

    /// The step `f` makes, made only when [`run`] gets to it: a child's
    /// step is built lazily, so building a parent's step never descends.
    pub(crate) fn lazy(f: impl FnOnce() -> Step<'a, T> + 'a) -> Self {
        Step::Descend(Box::new(f), Box::new(Step::Done))
    }

    /// This step, then `k` on its result. Always deferred to [`run`] (never
    /// called here), so chaining many immediate results nests no frames.
    pub(crate) fn then(self, k: impl FnOnce(Result<T, Error>) -> Step<'a, T> + 'a) -> Self {
        Step::Descend(Box::new(move || self), Box::new(k))
    }

    /// This step, then `k` on its success (an error passes through).
    pub(crate) fn and_then(self, k: impl FnOnce(T) -> Step<'a, T> + 'a) -> Self {
        self.then(move |r| match r {
            Ok(v) => k(v),
            Err(e) => Step::err(e),
        })
    }
}

/// Run `first` and every step it nests to the final result.
pub(crate) fn run<T>(first: Step<'_, T>) -> Result<T, Error> {
    let mut pending: Vec<Then<'_, T>> = Vec::new();
    let mut step = first;
    loop {
        match step {
            Step::Done(r) => match pending.pop() {
                Some(k) => step = k(r),
                None => return r,
            },
            Step::Descend(start, k) => {
                pending.push(k);
                step = start();
            }
        }
    }
}

/// Stack that must remain before a traversal is re-entered natively (a
/// hook or callback calling back into it): room for the traversal's own
/// frames plus a frontend's (an interpreter running a Python callback).
const HEADROOM: usize = 256 << 10;

thread_local! {
    /// Traversal runs under way on this thread (outermost = 1).
    static RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A traversal run entered on this thread, left when dropped.
pub(crate) struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        RUNS.with(|r| r.set(r.get() - 1));
    }
}

/// Enter a traversal run of `what`. The outermost run needs no more stack
/// than its caller's frame; a run re-entered natively from inside another
/// (a hook or callback visiting children itself) is refused when the
/// thread's stack is nearly used up — such nesting gets an error, not a
/// crash.
pub(crate) fn enter(what: &str) -> Result<Entered, Error> {
    let nested = RUNS.with(|r| r.get()) > 0;
    if nested && stacker::remaining_stack().is_some_and(|left| left < HEADROOM) {
        return Err(Error::runtime_error(format!(
            "{what}: hooks or callbacks that call back into the traversal nest too deeply for \
             the thread's stack (values the core descends into itself may nest without limit)"
        )));
    }
    RUNS.with(|r| r.set(r.get() + 1));
    Ok(Entered(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Depth of a chain of `n` nested steps, computed on the work stack.
    fn depth(n: u64) -> Step<'static, u64> {
        if n == 0 {
            return Step::ok(0);
        }
        Step::Descend(Box::new(move || depth(n - 1)), Box::new(|r| Step::Done(r.map(|d| d + 1))))
    }

    #[test]
    fn a_million_nested_steps_need_no_native_stack() {
        assert_eq!(run(depth(1_000_000)).unwrap(), 1_000_000);
    }

    #[test]
    fn errors_pass_through_every_continuation() {
        let seen = std::cell::Cell::new(0);
        let step = Step::<u64>::err(Error::value_error("bad")).then(|r| {
            seen.set(seen.get() + 1);
            Step::Done(r)
        });
        let r = run(step.and_then(|_| unreachable!("an error skips and_then")));
        assert_eq!(r.unwrap_err().message(), "bad");
        assert_eq!(seen.get(), 1);
    }

    #[test]
    fn nested_runs_are_refused_once_the_stack_runs_low() {
        fn nest(levels: &mut usize) -> Result<(), Error> {
            let _run = enter("test")?;
            *levels += 1;
            // A frame big enough to use up the stack in a few hundred levels.
            let pad = std::hint::black_box([0u8; 4096]);
            nest(levels).map(|()| {
                std::hint::black_box(&pad);
            })
        }
        let mut levels = 0;
        let e = std::thread::Builder::new()
            .stack_size(4 << 20)
            .spawn(move || nest(&mut levels).map(|()| levels))
            .unwrap()
            .join()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.kind(), "RuntimeError");
        assert!(e.message().starts_with("test: hooks or callbacks that call back into the traversal nest too deeply"), "{}", e.message());
        assert_eq!(RUNS.with(|r| r.get()), 0, "every run left");
    }
}
