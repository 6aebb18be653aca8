"""Prints an OAuth token bundle of realistic size (~6 KB of JSON): an access token, a refresh
token and an ID token, each a JWT (RS256 header, claims, a random signature), with a long scope
list, as a sign-in stores it. Used by tests/wine/e2e.sh: larger than one Windows credential
holds (2 560 bytes)."""
import base64
import json
import os


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(claims: dict, signature_bytes: int) -> str:
    head = b64(json.dumps({"alg": "RS256", "kid": "k-2026-11", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims, ensure_ascii=False).encode())
    return f"{head}.{body}.{b64(os.urandom(signature_bytes))}"


scope = " ".join(f"scope.read.{i} scope.write.{i}" for i in range(64))
claims = {
    "iss": "https://auth.example.com/",
    "sub": "user-8f14e45f-ceea-467f-a8f0-0d5b1c2a9e37",
    "aud": ["https://mcp.example.com/"],
    "iat": 1796400000,
    "exp": 1796403600,
    "scope": scope,
    "azp": "mcp-companion",
    "groups": ["dev", "ops", "ünïcode-team"],
}
bundle = {
    "access_token": jwt(claims, 256),
    "token_type": "Bearer",
    "expires_in": 3600,
    "refresh_token": jwt({"typ": "refresh", "sid": "s-7d0e3b5e", "exp": 1799000000}, 256),
    "id_token": jwt({"sub": claims["sub"], "email": "person@example.com", "name": "Person"}, 256),
    "scope": scope,
}
print(json.dumps(bundle, ensure_ascii=False), end="")
