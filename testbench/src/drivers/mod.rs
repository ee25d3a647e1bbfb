//! Drivers and monitors (bus functional models), reusable by every block's test.

pub mod stream;
