//! Why the type table refused a registration (an unknown index, a taken
//! key, exhausted indices, ...). The table sits below the values, so it
//! reports with this error of its own, which converts into a ValueError.

/// A refused registration, with a message naming the type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeTableError {
    message: String,
}

impl TypeTableError {
    pub fn new(message: impl Into<String>) -> Self {
        TypeTableError { message: message.into() }
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for TypeTableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ValueError: {}", self.message)
    }
}

impl std::error::Error for TypeTableError {}
