//! The call policy ([`crate::hub::policy_of`], `toolPolicy` and the person's approval) for
//! calls that become tasks: applied before anything is sent, as for every other call, so a
//! tool the person denies or has not approved does not run as a task either. A refused call
//! gets the same `isError` result as an ordinary call: a 2026-07-28 agent gets it as the call's
//! result (the extension lets a server answer at once); an `initialize`-era agent, which asked
//! for a task, gets a task of the companion's own, already completed, holding it.

use rmcp::model::{CallToolResult, JsonObject};
use rmcp::{Peer, RoleServer};

use super::super::approve::Approval;
use crate::activity::Agent;
use crate::hub::Hub;

impl Hub {
    /// The call policy for a call of the served tool `name` with `arguments` that is to run
    /// as a task, made by `agent` (the control API when `None`): `None` when it may run
    /// (asking the person first when the policy says so), else the `isError` result the agent
    /// gets instead. A name not served is left to the call itself to refuse.
    pub async fn task_call_refused(
        &self,
        name: &str,
        arguments: Option<&JsonObject>,
        agent: Option<&Peer<RoleServer>>,
    ) -> Option<CallToolResult> {
        let route = self.catalog().route(name)?.clone();
        let server = self.server(&route.server)?;
        let who = || agent.map_or_else(Agent::control, |peer| self.agent_of(peer));
        match Box::pin(self.approve(name, &route, &server, arguments, &who, None)).await {
            Approval::Run(_) => None,
            Approval::Refused(refused) => Some(crate::hub::error_result(refused.message)),
        }
    }
}
