//! Verdicts: the one results model ([`results`], with each test's [`test_result`]), a repeated test's k-of-n verdict
//! ([`repeat`]), variants side by side ([`variants`]) and the statistics behind them
//! ([`stats`]), how far an LLM judge agrees with people ([`agreement`]), the labels it is
//! measured against ([`labels`]) and its certificate ([`certificate`]), the routing figures
//! of routing suites ([`routing`]), the release search of `aptitude bisect` ([`bisect`])
//! over an agent's ordered releases ([`releases`]), and what changed in an agent's tools
//! between two releases ([`drift`]), and the releases of an agent side by side
//! ([`versions`]).

pub mod agreement;
pub mod bias;
pub mod bisect;
pub mod certificate;
pub mod choices;
pub mod coverage;
pub mod drift;
pub mod labels;
pub mod releases;
pub mod repeat;
pub mod results;
pub mod routing;
pub mod stats;
pub mod test_result;
pub mod variants;
pub mod versions;
