//! Reporters: how results are shown. Every reporter renders from the one results model
//! ([`crate::results`]); none of them re-runs or re-judges anything.

pub mod baseline;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod terminal;
