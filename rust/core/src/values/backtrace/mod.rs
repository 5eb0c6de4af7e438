//! Native backtraces of errors: cheap to take, resolved only when read.
//!
//! Python code uses exceptions as control flow (TVM probes op names with
//! `try`/`except` hundreds of times at import), so raising an error must
//! cost microseconds. A backtrace is therefore taken as frame addresses
//! only ([`capture`]), stops at the FFI boundary (the innermost
//! `TVMFFIFunctionCall`, or a function a frontend registered as its own
//! entry into native code), keeps at most `TVM_TRACEBACK_LIMIT` frames, and
//! is written as text whose native frames are placeholder lines naming
//! their addresses:
//!
//! ```text
//!   File "<unresolved>", line 0, in 0x7f3a12345678
//! ```
//!
//! [`resolve`] rewrites those lines as `File "src.cc", line 12, in fn` when
//! the text is read (the Python exception is built, `Error.backtrace`,
//! `TetherFFIBacktraceResolve`), through a process-wide cache of resolved
//! addresses ([`symbolize`]). Text without placeholders passes through
//! unchanged, so backtraces from elsewhere (Python tracebacks, other
//! processes) are never touched.
//!
//! Order: the frame that raised first, then its callers outwards (most
//! recent call first, as upstream stores it: the C++ headers reverse it to
//! print, and the Python side appends the frames to a traceback in turn).

mod capture;
mod symbolize;

use std::borrow::Cow;
use std::fmt::Write as _;

pub use capture::add_boundary_function;
pub use symbolize::{forget_resolved, symbolized_count, symbolized_on_this_thread};

/// How the text marks a frame not yet resolved: this prefix, then the
/// address in hex.
const UNRESOLVED_PREFIX: &str = "  File \"<unresolved>\", line 0, in 0x";

/// What `TVMFFIBacktrace` and the core's own errors capture.
pub struct Request<'a> {
    /// The frame that raised, as its caller names it (file, line,
    /// function); it replaces the caller's own captured frame.
    pub explicit: Option<(&'a str, i32, &'a str)>,
    /// Stop at the innermost FFI boundary (`cross_ffi_boundary == 0`).
    pub stop_at_boundary: bool,
}

/// A backtrace of the calling thread, frames as placeholders. The frames
/// up to and including the one of `entry` (the function asking, given by
/// its address) are left out, and so are `skip` more, and its caller's
/// when the request names the raising frame explicitly.
pub fn capture(req: &Request<'_>, entry: usize, skip: usize) -> String {
    let limit = capture::frame_limit();
    let skip = skip + usize::from(req.explicit.is_some());
    let ips = capture::frame_addresses(entry, skip, limit, req.stop_at_boundary);
    let mut text = String::with_capacity(ips.len() * (UNRESOLVED_PREFIX.len() + 16) + 64);
    if let Some((file, line, func)) = req.explicit {
        let _ = writeln!(text, "  File \"{file}\", line {line}, in {func}");
    }
    for ip in &ips {
        let _ = writeln!(text, "{UNRESOLVED_PREFIX}{ip:x}");
    }
    text
}

/// `text` with every placeholder frame resolved (one placeholder may become
/// several lines, for frames inlined at that address, or none, for frames
/// of the FFI's own plumbing). Borrowed when there is nothing to resolve.
pub fn resolve(text: &str) -> Cow<'_, str> {
    if !text.contains(UNRESOLVED_PREFIX) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() * 2);
    for line in text.split_inclusive('\n') {
        match line.strip_prefix(UNRESOLVED_PREFIX).and_then(|rest| usize::from_str_radix(rest.trim_end(), 16).ok()) {
            Some(ip) => out.push_str(&symbolize::frame_text(ip)),
            None => out.push_str(line),
        }
    }
    Cow::Owned(out)
}

/// Whether `text` holds frames not yet resolved.
pub fn has_unresolved(text: &str) -> bool {
    text.contains(UNRESOLVED_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn raise_here() -> String {
        let req = Request { explicit: Some(("here.cc", 7, "RaiseHere")), stop_at_boundary: false };
        capture(&req, raise_here as *const () as usize, 0)
    }

    #[test]
    fn capture_writes_the_explicit_frame_first_then_placeholders() {
        let text = raise_here();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  File \"here.cc\", line 7, in RaiseHere");
        assert!(lines.len() > 1, "no native frame captured: {text}");
        assert!(lines[1..].iter().all(|l| l.starts_with(UNRESOLVED_PREFIX)), "{text}");
        assert!(has_unresolved(&text));
    }

    #[test]
    fn capturing_symbolizes_nothing() {
        let before = symbolized_on_this_thread();
        for _ in 0..100 {
            assert!(has_unresolved(&raise_here()));
        }
        assert_eq!(symbolized_on_this_thread(), before);
    }

    #[test]
    fn resolve_names_the_frames_and_keeps_other_lines() {
        let text = raise_here();
        let resolved = resolve(&text);
        assert!(!has_unresolved(&resolved), "{resolved}");
        // This test function called raise_here (whose own frame the
        // explicit line replaces).
        assert!(resolved.contains("resolve_names_the_frames"), "{resolved}");
        assert!(resolved.starts_with("  File \"here.cc\", line 7, in RaiseHere\n"), "{resolved}");
        // Text without placeholders is passed through as is.
        let plain = "  File \"a.py\", line 3, in f\n";
        assert!(matches!(resolve(plain), Cow::Borrowed(s) if s == plain));
        // A malformed placeholder stays as written.
        let bad = format!("{UNRESOLVED_PREFIX}zz\n");
        assert_eq!(resolve(&bad), bad);
    }

    #[test]
    fn resolving_twice_symbolizes_once() {
        let text = raise_here();
        let _ = resolve(&text);
        let before = symbolized_on_this_thread();
        let again = resolve(&text);
        assert!(!has_unresolved(&again));
        assert_eq!(symbolized_on_this_thread(), before, "cached addresses were symbolized again");
    }
}
