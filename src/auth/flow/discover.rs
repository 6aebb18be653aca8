//! Discovery: where the server's authorization server is and what it publishes (RFC 9728, RFC
//! 8414, OpenID discovery, the 2025-03-26 defaults), set on the authorization manager.

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
};

use super::{SignInError, Target, oauth_error, scrub};
use crate::auth::http::GuardedOAuthHttp;

/// Discovery (see the module doc), then sets the metadata on `m`. The second value is `true`
/// when the metadata came from a document the authorization server published, `false` for the
/// 2025-03-26 default endpoints (no document: nothing to check PKCE support against).
///
/// One relaxation of RFC 8414 §3.3 (the `issuer` must equal the URL the metadata was found
/// under): in 2025-03-26 discovery, the authorization server is the MCP server's own origin,
/// and some servers of that era name an issuer with a path on that same origin
/// (`https://h/oauth` for metadata at `https://h/.well-known/oauth-authorization-server`).
/// Such metadata is accepted when expected and received issuer share the server URL's origin;
/// any other mismatch is refused (mix-up protection).
pub(super) async fn discover(
    m: &mut AuthorizationManager,
    http: &GuardedOAuthHttp,
    target: &Target,
    challenge: Option<&str>,
) -> Result<(AuthorizationMetadata, bool), SignInError> {
    match m.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => {
            tracing::info!(
                server = %target.server,
                source = ?resolution.source,
                "found the authorization server"
            );
            m.set_metadata(resolution.metadata.clone());
            let published =
                resolution.source != AuthorizationMetadataSource::LegacyEndpointFallback;
            Ok((resolution.metadata, published))
        }
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if same_origin(&target.url, &expected_issuer)
            && same_origin(&target.url, &received_issuer) =>
        {
            let mut at = target.url.clone();
            at.set_path("/.well-known/oauth-authorization-server");
            at.set_query(None);
            at.set_fragment(None);
            let body = http
                .get(&at)
                .await
                .map_err(|e| SignInError::OAuth(scrub(&e.to_string(), target)))?;
            let metadata: AuthorizationMetadata = serde_json::from_slice(&body).map_err(|e| {
                SignInError::OAuth(format!("authorization server metadata is malformed: {e}"))
            })?;
            tracing::info!(
                server = %target.server,
                issuer = %received_issuer,
                "2025-03-26 discovery: accepting the issuer on the server's own origin"
            );
            m.set_metadata(metadata.clone());
            Ok((metadata, true))
        }
        Err(e) => Err(oauth_error(&e, target, http)),
    }
}

/// Whether `other` parses as a URL on `url`'s origin (scheme, host, port).
pub(super) fn same_origin(url: &url::Url, other: &str) -> bool {
    url::Url::parse(other).is_ok_and(|o| o.origin() == url.origin())
}
