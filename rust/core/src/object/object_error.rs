//! Why an object could not be made or viewed: allocation refused or failed,
//! or an object of another type than asked for. The object layer sits below
//! the values (where [`crate::values::error::Error`], itself holding an
//! object, lives), so it reports with this small error of its own, which
//! converts into an `Error` of the same kind and message.

/// A failed allocation or downcast: a Python exception kind and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectError {
    kind: &'static str,
    message: String,
}

impl ObjectError {
    pub fn value_error(message: impl Into<String>) -> Self {
        ObjectError { kind: "ValueError", message: message.into() }
    }
    pub fn type_error(message: impl Into<String>) -> Self {
        ObjectError { kind: "TypeError", message: message.into() }
    }
    pub fn runtime_error(message: impl Into<String>) -> Self {
        ObjectError { kind: "RuntimeError", message: message.into() }
    }
    pub fn memory_error(message: impl Into<String>) -> Self {
        ObjectError { kind: "MemoryError", message: message.into() }
    }

    pub fn kind(&self) -> &'static str {
        self.kind
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for ObjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ObjectError {}
